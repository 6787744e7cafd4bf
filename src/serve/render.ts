import type { Verdict } from '../verdict.js';
import { undeterminedBy } from '../reason.js';

/** Which of the spec's two response shapes to serve (A: flat, B: wrapped in `data`). */
export type Shape = 'a' | 'b';

// The spec types isValid and confidence as required. isValid is "true when the
// address is valid and deliverable", so an `unknown` verdict (isValid undefined
// in the engine) is answered false; mailsift's own client reads it back as empty
// for `unknown` (engines/api/normalize.ts), as the offline engine writes it.
const isValidOf = (v: Verdict): boolean => v.isValid ?? v.status === 'valid';
const confidenceOf = (v: Verdict): number => v.confidence ?? 0;

/** Shape A details: the spec's five checks, plus `free`/`suggestion` when the engine tells. */
function detailsOf(v: Verdict): Record<string, unknown> {
  const d = v.details;
  return {
    syntax: d.syntax,
    domain: d.domain,
    mx: d.mx,
    disposable: d.disposable,
    role: d.role,
    free: d.free,
    suggestion: d.suggestion,
    smtp: d.smtp,
    catchAll: d.catchAll,
  };
}

/** The provider pass-through: only the fields the engine actually determined. */
function rawResponseOf(v: Verdict): Record<string, unknown> {
  const d = v.details;
  return {
    quality_score: v.confidence === undefined ? undefined : Math.round(v.confidence * 100),
    syntax_check: d.syntax,
    mx_check: d.mx,
    disposable_domains: d.disposable,
    free_email: d.free,
    // the mailbox check (--smtp): only what it determined
    smtp_check: d.smtp,
    deliverable: d.smtp === false ? false : d.smtp === true && d.catchAll === false ? true : undefined,
    catch_all: d.catchAll,
    accept_all: d.catchAll,
    // why the mailbox check could not tell, or was not made (its SSRF guard, a full queue)
    smtp_failure: d.smtp === undefined ? d.smtpFailure : undefined,
    smtp_note: d.smtp === undefined ? v.smtpNote : undefined,
  };
}

/** The code of the error object on a result that was not determined, for a temporary reason. */
export const UNDETERMINED = 'UNDETERMINED';

/**
 * A result not determined for a temporary reason (never final, see
 * Finality in reason.ts: this server's DNS unusable or a domain's unanswered,
 * a mail server that timed out, deferred or refused the checker) carries the
 * spec's error object, as mailsift's own output does on a row without a
 * verdict: `code` UNDETERMINED, `details` the reason token. A client must not
 * keep it as an answer, and mailsift's does not (engines/api/normalize.ts).
 */
function undeterminedError(v: Verdict): { error: { code: string; message: string; details: string } } | undefined {
  const reason = undeterminedBy(v);
  if (reason === undefined) return undefined;
  const message =
    v.outage === 'dns'
      ? "not determined: this server's DNS is unusable; ask again later"
      : v.outage === 'smtp'
        ? 'not determined: this server cannot reach mail servers; ask again later'
        : 'not determined, for a temporary reason; ask again later';
  return { error: { code: UNDETERMINED, message, details: reason } };
}

export function singleBody(shape: Shape, v: Verdict, responseTimeMs: number): unknown {
  if (shape === 'b') {
    return {
      success: true,
      data: {
        email: v.email,
        isValid: isValidOf(v),
        confidence: confidenceOf(v),
        provider: v.provider,
        // data.type's values are "not shown" by the spec; we send the status so a
        // Shape B client can tell risky and unknown from valid and invalid.
        type: v.status,
        disposable: v.details.disposable,
        role: v.details.role,
        ...undeterminedError(v),
      },
    };
  }
  return {
    success: true,
    email: v.email,
    isValid: isValidOf(v),
    status: v.status,
    confidence: confidenceOf(v),
    provider: v.provider,
    responseTime: Math.round(responseTimeMs),
    details: detailsOf(v),
    rawResponse: rawResponseOf(v),
    ...undeterminedError(v),
  };
}

export function bulkBody(shape: Shape, verdicts: readonly Verdict[]): unknown {
  if (shape === 'b') {
    // Shape B shows only isValid, so its counts are by isValid: what its reader can check.
    const valid = verdicts.filter(isValidOf).length;
    return {
      success: true,
      data: {
        results: verdicts.map((v) => ({ email: v.email, isValid: isValidOf(v), confidence: confidenceOf(v), ...undeterminedError(v) })),
        summary: { total: verdicts.length, valid, invalid: verdicts.length - valid },
      },
    };
  }
  const count = (status: string): number => verdicts.filter((v) => v.status === status).length;
  return {
    success: true,
    results: verdicts.map((v) => ({
      email: v.email,
      isValid: isValidOf(v),
      status: v.status,
      confidence: confidenceOf(v),
      provider: v.provider,
      details: detailsOf(v),
      ...undeterminedError(v),
    })),
    summary: { total: verdicts.length, valid: count('valid'), invalid: count('invalid'), risky: count('risky') },
  };
}

/** An HTTP error as the API's error object: `{ error: { code, message } }`. */
export interface ApiError {
  status: number;
  code: string;
  message: string;
  details: string;
}

export function errorBody(e: ApiError): unknown {
  return { success: false, error: { code: e.code, message: e.message, details: e.details } };
}

export const apiError = (status: number, code: string, message: string, details: string): ApiError => ({
  status,
  code,
  message,
  details,
});
