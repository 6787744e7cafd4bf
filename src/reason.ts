import type { Status, Verdict } from './verdict.js';

/**
 * Why a row is not plainly valid: one token per row, by status, in the order
 * the summary and the docs list them (risky's is also its precedence: the
 * flag that argues most strongly against sending first).
 */
export const REASON_TABLE = {
  invalid: ['syntax', 'domain_not_found', 'no_mail_server', 'mailbox_not_found', 'mailbox_disabled', 'rejected', 'empty'],
  risky: ['disposable', 'typo', 'mailbox_full', 'catch_all', 'role', 'low_confidence'],
  unknown: ['dns_error', 'smtp_unreachable', 'smtp_timeout', 'greylisted', 'smtp_blocked', 'smtp_sender_refused', 'smtp_no_utf8', 'api_error', 'unverifiable'],
} as const;

export const REASONS = [...REASON_TABLE.invalid, ...REASON_TABLE.risky, ...REASON_TABLE.unknown] as const;
export type Reason = (typeof REASONS)[number];

/** The statuses a row with this reason can have (each reason belongs to one). */
export function statusesOf(reason: Reason): Status[] {
  if ((REASON_TABLE.invalid as readonly string[]).includes(reason)) return ['invalid'];
  if ((REASON_TABLE.risky as readonly string[]).includes(reason)) return ['risky'];
  return ['unknown'];
}

export function isReason(token: string): token is Reason {
  return (REASONS as readonly string[]).includes(token);
}

const SMTP_REASON = {
  unreachable: 'smtp_unreachable',
  timeout: 'smtp_timeout',
  greylisted: 'greylisted',
  blocked: 'smtp_blocked',
  'sender-refused': 'smtp_sender_refused',
  'no-utf8': 'smtp_no_utf8',
} as const satisfies Record<string, Reason>;

/**
 * The one place that reads a verdict's details as a reason: Shape A details,
 * Shape B's flags, the precheck and the offline engine's checks all arrive as
 * the same Details. A detail the source did not give is simply not evidence;
 * a verdict without any gets the status's catch-all token (rejected,
 * low_confidence, unverifiable). Valid rows have no reason: a mailbox the
 * check could not tell about makes the row unknown (decide.ts), not valid.
 */
export function reasonOf(v: Verdict): Reason | '' {
  const d = v.details;
  const smtp = d.smtpFailure === undefined ? undefined : SMTP_REASON[d.smtpFailure];
  switch (v.status) {
    case 'valid':
      return '';
    case 'invalid':
      // an empty cell: nothing to send, nothing wrong with an address
      if (v.email === '' && v.provider === 'precheck') return 'empty';
      if (d.syntax === false || v.provider === 'precheck') return 'syntax';
      if (d.dnsFailure === 'nxdomain') return 'domain_not_found';
      if (d.dnsFailure === 'null-mx' || d.dnsFailure === 'no-mail-host' || d.mx === false) return 'no_mail_server';
      if (d.mailbox === 'disabled') return 'mailbox_disabled';
      if (d.smtp === false) return 'mailbox_not_found';
      return 'rejected';
    case 'risky':
      if (d.disposable === true) return 'disposable';
      if (d.suggestion !== undefined) return 'typo';
      // a refused mailbox is invalid, so a risky row the server turned away is one that is full
      if (d.mailbox === 'full' || d.smtp === false) return 'mailbox_full';
      if (d.catchAll === true) return 'catch_all';
      if (d.role === true) return 'role';
      return 'low_confidence';
    case 'unknown':
      // a dry run sends nothing: nothing was tried that could have failed
      if (v.error) return v.error.code === 'DRY_RUN' ? 'unverifiable' : 'api_error';
      if (d.dnsFailure === 'unanswered') return 'dns_error';
      return smtp ?? 'unverifiable';
  }
}

/**
 * Which verdicts are kept, by reason: the one statement of the rule (the
 * table of reasons in docs/output.md has it as its `final` column, and a test
 * holds the two together).
 *
 * - `final`: a determination about the address — valid, invalid, risky.
 *   Journaled and cached: a resumed run and, within --cache-ttl, a later run
 *   reuse it.
 * - `resume-only`: the API's or the server's own `unknown` for the address. It
 *   is an answer, so it is journaled and a resumed job does not pay for it
 *   twice; but it determined nothing, so no cache ever serves it: a later run
 *   asks again.
 * - `never`: an `unknown` from a temporary condition or the run's own means —
 *   DNS errors and timeouts, a mail server that could not be reached, timed out,
 *   deferred (4xx, greylisting) or refused the checker, an API error, an
 *   outage. Neither journaled nor cached: a resumed run asks again.
 */
export type Finality = 'final' | 'resume-only' | 'never';

const BY_REASON = {
  syntax: 'final',
  domain_not_found: 'final',
  no_mail_server: 'final',
  mailbox_not_found: 'final',
  mailbox_disabled: 'final',
  rejected: 'final',
  disposable: 'final',
  typo: 'final',
  // full now, perhaps not next week; but the server's answer about the mailbox, as a bounce would be
  mailbox_full: 'final',
  catch_all: 'final',
  role: 'final',
  low_confidence: 'final',
  dns_error: 'never',
  smtp_unreachable: 'never',
  smtp_timeout: 'never',
  greylisted: 'never',
  smtp_blocked: 'never',
  // about the check's own sender address, or what this server could be asked: nothing said of the mailbox
  smtp_sender_refused: 'never',
  smtp_no_utf8: 'never',
  api_error: 'never',
  unverifiable: 'resume-only',
  // an empty cell is never sent: nothing of it is kept
  empty: 'never',
} as const;

/** Finality by reason (see Finality); every reason has its line, or this does not compile. */
export const FINALITY: Readonly<Record<Reason, Finality>> = BY_REASON;

const RANK: Record<Finality, number> = { never: 0, 'resume-only': 1, final: 2 };

/**
 * How final `v` is: its reason's finality, unless a check behind it could not
 * tell for a reason that is never final — a role address whose DNS did not
 * answer is `risky` by the lists, but the domain might not exist; a risky row
 * whose mailbox check timed out might be a mailbox the server refuses.
 */
export function finalityOf(v: Verdict): Finality {
  return weakest(v).finality;
}

/**
 * The reason that makes `v` never final (see Finality), or undefined when it
 * is final, or final for a journal: what `serve` tells its clients in the
 * result's error object.
 */
export function undeterminedBy(v: Verdict): Reason | undefined {
  const w = weakest(v);
  return w.finality === 'never' && w.reason !== '' ? w.reason : undefined;
}

/** The least final of the reasons that apply to `v`: its own, and the causes behind checks that could not tell. */
function weakest(v: Verdict): { finality: Finality; reason: Reason | '' } {
  const own = reasonOf(v);
  let w: { finality: Finality; reason: Reason | '' } = { finality: own === '' ? 'final' : FINALITY[own], reason: own };
  const weaker = (reason: Reason): void => {
    if (RANK[FINALITY[reason]] < RANK[w.finality]) w = { finality: FINALITY[reason], reason };
  };
  const d = v.details;
  if (v.error) weaker('api_error');
  if (d.dnsFailure === 'unanswered') weaker('dns_error');
  if (d.smtpFailure !== undefined) weaker(SMTP_REASON[d.smtpFailure]);
  return w;
}

/** Whether a store of this kind keeps and reuses `v` (see Finality): the journal of a job, or a cache across jobs. */
export function keptBy(store: 'journal' | 'cache', v: Verdict): boolean {
  const f = finalityOf(v);
  return f === 'final' || (f === 'resume-only' && store === 'journal');
}
