/**
 * Status and confidence of the offline engine: a pure function of the checks.
 *
 * Status, first rule that holds wins:
 *   1. invalid  — bad syntax; NXDOMAIN; a null MX (RFC 7505); or a domain that
 *                 exists but has neither MX nor A/AAAA (nowhere to deliver).
 *                 A negative DNS answer counts only from a resolver that passed
 *                 the probe (see dns.ts): broken DNS is not evidence.
 *   2. risky    — disposable domain, role mailbox, a did-you-mean suggestion
 *                 (a misspelt popular domain), or an address literal. These are
 *                 facts about the address itself, so they hold even when DNS
 *                 could not answer.
 *   3. unknown  — DNS did not answer (timeout, SERVFAIL, unusable resolver).
 *   4. valid    — everything else: MX found, implicit MX (A/AAAA only), or DNS
 *                 switched off on purpose (`dns: false`; mx is then left empty).
 *
 * Confidence is how sure the engine is of that status, from 0 to 1:
 *   invalid: syntax 1.00 · null MX 0.99 · NXDOMAIN / no mail host 0.95
 *   risky:   disposable or role 0.90 · otherwise (suggestion, literal) 0.70
 *   valid:   MX 0.90 · implicit MX 0.70 · DNS off 0.60
 *   unknown: 0.30
 * A free-mail provider changes neither status nor confidence.
 */
import type { Status, Verdict } from '../../verdict.js';

export const PROVIDER = 'mailsift-local';

/** What DNS said of a domain, once trusted (see dns.ts). */
export type DnsOutcome =
  | 'mx'
  | 'implicit-mx'
  | 'null-mx'
  | 'nxdomain'
  | 'no-mail-host'
  | 'unanswered'
  /** not asked: DNS switched off, or an address literal */
  | 'skipped';

export interface Checks {
  syntax: boolean;
  domain?: string;
  literal?: boolean;
  disposable?: boolean;
  role?: boolean;
  free?: boolean;
  /** a whole did-you-mean address */
  suggestion?: string;
  dns: DnsOutcome;
}

const MX_DETAIL: Record<DnsOutcome, boolean | undefined> = {
  mx: true,
  'implicit-mx': true,
  'null-mx': false,
  nxdomain: false,
  'no-mail-host': false,
  unanswered: undefined,
  skipped: undefined,
};

export function decide(email: string, c: Checks): Verdict {
  const [status, confidence] = statusOf(c);
  return {
    email,
    isValid: status === 'unknown' ? undefined : status !== 'invalid',
    status,
    confidence,
    provider: PROVIDER,
    details: c.syntax
      ? {
          syntax: true,
          domain: c.domain,
          mx: MX_DETAIL[c.dns],
          disposable: c.disposable,
          role: c.role,
          free: c.free,
          suggestion: c.suggestion,
        }
      : { syntax: false },
  };
}

function statusOf(c: Checks): [Status, number] {
  if (!c.syntax) return ['invalid', 1];
  if (c.dns === 'null-mx') return ['invalid', 0.99];
  if (c.dns === 'nxdomain' || c.dns === 'no-mail-host') return ['invalid', 0.95];
  if (c.disposable || c.role) return ['risky', 0.9];
  if (c.suggestion !== undefined || c.literal) return ['risky', 0.7];
  if (c.dns === 'unanswered') return ['unknown', 0.3];
  if (c.dns === 'mx') return ['valid', 0.9];
  if (c.dns === 'implicit-mx') return ['valid', 0.7];
  return ['valid', 0.6];
}
