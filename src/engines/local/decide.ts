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
 * With the mailbox check (`--smtp`), what the domain's mail
 * server said comes in between:
 *   - refused (550 5.1.1 "user unknown", ...) → invalid, before the list rules
 *     (a role or disposable address that does not exist is not deliverable);
 *   - mailbox full → risky; accepted by a catch-all domain → risky (a catch-all
 *     accepts anything, so its 250 proves nothing), after disposable/role;
 *   - accepted by a domain that is not catch-all → valid, with more confidence;
 *   - undetermined (port 25 blocked, timeouts, a dropped connection, a block
 *     of the checker's IP, greylisting that outlasted the retry, our reverse
 *     path refused and `<>` too, a non-ASCII local part and a server without
 *     SMTPUTF8, a provider known to accept everything) → unknown, after
 *     invalid and risky: the user asked about the mailbox, and DNS's `valid`
 *     would be a guess about it. A blocked checker is not evidence
 *     either way. `smtpFailure` says why (unreachable, timeout, greylisted,
 *     blocked, sender-refused, no-utf8), so the row can carry the reason; a
 *     provider that accepts everything has none (the reason is then
 *     `unverifiable`). Serve's answers at `--smtp-deadline`, or past its
 *     queue of pending checks, have no finding yet: they are undetermined
 *     too (`timeout`), so that no client keeps them as final.
 *
 * Confidence is how sure the engine is of that status, from 0 to 1:
 *   invalid: syntax 1.00 · null MX 0.99 · NXDOMAIN / no mail host 0.95
 *            · mailbox refused by its server 0.95
 *   risky:   disposable or role 0.90 · mailbox full 0.80
 *            · otherwise (suggestion, literal) 0.70 · catch-all 0.60
 *   valid:   mailbox accepted (not catch-all) 0.97 · MX 0.90 · implicit MX 0.70
 *            · DNS off 0.60
 *   unknown: 0.30
 * A free-mail provider changes neither status nor confidence.
 */
import type { Details, DnsFailure, SmtpFailure, Status, Verdict } from '../../verdict.js';

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
  /**
   * what the mail server said of the mailbox (--smtp); absent when not asked or
   * undetermined. 'disabled' (5.2.1, 551/5.1.6 moved) is a refusal the server
   * gave a cause for.
   */
  mailbox?: 'accepted' | 'refused' | 'disabled' | 'full';
  /** why the mailbox check could not tell, when it was asked and could not */
  smtpFailure?: SmtpFailure;
  /** whether the domain accepts any mailbox; absent when not known */
  catchAll?: boolean;
  /** the domain's mail service is known to accept every address at RCPT time (providers.ts): not asked, nothing proven */
  acceptsAll?: boolean;
  /** the run's own means failed for this row (DNS unusable, outbound SMTP blocked): see Verdict.outage */
  outage?: 'dns' | 'smtp';
  /** why the mailbox check could not tell, in words, or why it was not made (serve's queue, its SSRF guard) */
  smtpNote?: string;
}

/** the DNS outcomes that speak against the domain, as the verdict tells them */
const DNS_FAILURE: Partial<Record<DnsOutcome, DnsFailure>> = {
  'null-mx': 'null-mx',
  nxdomain: 'nxdomain',
  'no-mail-host': 'no-mail-host',
  unanswered: 'unanswered',
};

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
  const verdict: Verdict = {
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
          ...(c.mailbox !== undefined ? { smtp: c.mailbox === 'accepted' } : {}),
          ...(c.catchAll !== undefined ? { catchAll: c.catchAll } : {}),
          ...causes(c),
        }
      : { syntax: false },
  };
  if (c.syntax && c.mailbox === undefined && c.smtpNote !== undefined) verdict.smtpNote = c.smtpNote;
  // a risky row too: what DNS or the mail server would have said (NXDOMAIN, a refusal) could still make it invalid
  if (c.outage !== undefined) verdict.outage = c.outage;
  return verdict;
}

/** The causes behind the checks (see Details), present only when there is one. */
function causes(c: Checks): Details {
  const out: Details = {};
  const dns = DNS_FAILURE[c.dns];
  if (dns !== undefined) out.dnsFailure = dns;
  // an answer about the mailbox makes the check's trouble with other hosts moot
  if (c.smtpFailure !== undefined && c.mailbox === undefined) out.smtpFailure = c.smtpFailure;
  if (c.mailbox === 'full' || c.mailbox === 'disabled') out.mailbox = c.mailbox;
  return out;
}

function statusOf(c: Checks): [Status, number] {
  if (!c.syntax) return ['invalid', 1];
  if (c.dns === 'null-mx') return ['invalid', 0.99];
  if (c.dns === 'nxdomain' || c.dns === 'no-mail-host') return ['invalid', 0.95];
  if (c.mailbox === 'refused' || c.mailbox === 'disabled') return ['invalid', 0.95];
  if (c.disposable || c.role) return ['risky', 0.9];
  if (c.mailbox === 'full') return ['risky', 0.8];
  if (c.suggestion !== undefined || c.literal) return ['risky', 0.7];
  if (c.mailbox === 'accepted' && c.catchAll === true) return ['risky', 0.6];
  if (c.mailbox === 'accepted') return ['valid', 0.97];
  if (c.dns === 'unanswered') return ['unknown', 0.3];
  // asked about the mailbox and could not tell: not the `valid` of DNS alone
  if (c.mailbox === undefined && (c.smtpFailure !== undefined || c.acceptsAll)) return ['unknown', 0.3];
  if (c.dns === 'mx') return ['valid', 0.9];
  if (c.dns === 'implicit-mx') return ['valid', 0.7];
  return ['valid', 0.6];
}
