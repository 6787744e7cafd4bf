import type { Verdict } from '../verdict.js';

/** The columns appended to every output row (PRODUCT.md §3); never engine-dependent. */
export const VERDICT_COLUMNS = [
  'status', 'is_valid', 'confidence', 'provider', 'syntax', 'domain',
  'mx', 'disposable', 'role', 'free', 'suggestion', 'smtp', 'catch_all', 'error',
] as const;

const cell = (v: boolean | number | string | undefined): string => (v === undefined ? '' : String(v));

/**
 * The appended cells as CSV text (leading comma included); an unknown value is
 * an empty cell. Only the cells that come from outside (provider, domain,
 * suggestion, error code) can need quoting or defusing; the rest are statuses,
 * booleans and numbers.
 */
export function verdictCsv(v: Verdict, quote: (s: string) => string): string {
  const d = v.details;
  return `,${v.status},${cell(v.isValid)},${cell(v.confidence)},${quote(v.provider)},${cell(d.syntax)},` +
    `${d.domain === undefined ? '' : quote(d.domain)},${cell(d.mx)},${cell(d.disposable)},${cell(d.role)},` +
    `${cell(d.free)},${d.suggestion === undefined ? '' : quote(d.suggestion)},${cell(d.smtp)},${cell(d.catchAll)},` +
    `${v.error ? quote(v.error.code) : ''}`;
}

/** The result object of JSON/NDJSON output: the spec's Shape A bulk item, plus `error`. */
export function resultObject(v: Verdict): Record<string, unknown> {
  const out: Record<string, unknown> = {
    email: v.email,
    isValid: v.isValid ?? null,
    status: v.status,
    confidence: v.confidence ?? null,
    provider: v.provider,
    details: v.details,
  };
  if (v.error) out.error = v.error;
  return out;
}
