import type { Status, Verdict } from './verdict.js';

/**
 * Why a row is not plainly valid: one token per row, by status, in the order
 * the summary and the docs list them (risky's is also its precedence: the
 * flag that argues most strongly against sending first).
 */
export const REASON_TABLE = {
  invalid: ['syntax', 'domain_not_found', 'no_mail_server', 'mailbox_not_found', 'mailbox_disabled', 'rejected'],
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
