import type { Reason } from '../reason.js';
import type { Status } from '../verdict.js';

/** What a list cleaner does with a group of rows. */
export type Action = 'send' | 'fix' | 'retry' | 'suppress';

export const ACTIONS: readonly Action[] = ['send', 'fix', 'retry', 'suppress'];

export const ACTION_TITLE: Record<Action, string> = {
  send: 'Send',
  fix: 'Fix',
  retry: 'Retry later',
  suppress: 'Suppress',
};

export interface Step {
  action: Action;
  /** the advice, in plain words */
  advice: string;
}

/** What to do with a row of a status, when its reason says no more. */
const BY_STATUS: Record<Status, Step> = {
  valid: { action: 'send', advice: 'nothing argues against sending' },
  invalid: { action: 'suppress', advice: 'mail to these addresses bounces, and bounces hurt your sender reputation' },
  risky: { action: 'suppress', advice: 'look at the flags (disposable, role, suggestion) before sending any' },
  unknown: { action: 'retry', advice: 'no verdict could be had this time: run again later (with --journal, nothing answered is paid for twice)' },
};

/**
 * What to do by reason (as docs/output.md's table of reasons says it, in
 * fewer words): the reason says why a row is not plainly valid, so it
 * decides the step. Every reason of the vocabulary has one (the type sees to it).
 */
const BY_REASON: Record<Reason, Step> = {
  empty: { action: 'suppress', advice: 'no address in the cell: nothing to send; fill it in at the source if you have one' },
  syntax: { action: 'suppress', advice: 'not an address: correct it at the source if you can, else drop it' },
  domain_not_found: { action: 'suppress', advice: 'the domain does not exist' },
  no_mail_server: { action: 'suppress', advice: 'the domain receives no mail' },
  mailbox_not_found: { action: 'suppress', advice: 'the mail server says this mailbox does not exist' },
  mailbox_disabled: { action: 'suppress', advice: 'the mailbox is disabled or has moved: ask the person for a new address' },
  rejected: { action: 'suppress', advice: 'the API judged it undeliverable' },
  disposable: { action: 'suppress', advice: 'a throwaway inbox: suppress for anything but a one-off mail' },
  typo: { action: 'fix', advice: 'a misspelt domain: correct it to the suggestion, then validate again' },
  mailbox_full: { action: 'retry', advice: 'the mailbox exists but is full: try again in a few days' },
  catch_all: { action: 'send', advice: 'with care: the domain accepts any address, so this one is unproven; watch the bounces' },
  role: { action: 'send', advice: 'a shared inbox (info@, support@): fine for business mail; send to a person if you have one' },
  low_confidence: { action: 'send', advice: 'with care: the API is not sure; watch the bounces' },
  dns_error: { action: 'retry', advice: 'DNS did not answer: run again later, or with another --dns-server' },
  smtp_unreachable: { action: 'retry', advice: 'the mail server could not be reached, so the mailbox is unchecked: run again later' },
  smtp_timeout: { action: 'retry', advice: 'the mail server was too slow to answer: run again later' },
  greylisted: { action: 'retry', advice: 'the mail server asked to come back later: run again in an hour' },
  smtp_blocked: { action: 'retry', advice: 'the mail server refused the checker itself: check from a host with a good reputation or through --smtp-proxy' },
  smtp_sender_refused: {
    action: 'retry',
    advice: "the mail server refused the checker's MAIL FROM address, and <> too: run again with --smtp-from set to an address of your own domain",
  },
  // a server without SMTPUTF8 cannot take a non-ASCII address at all (RFC 6531): mail to it bounces before it leaves
  smtp_no_utf8: {
    action: 'fix',
    advice: 'the mail server cannot take an address with non-ASCII letters before the @ (no SMTPUTF8): ask the person for another address',
  },
  api_error: { action: 'retry', advice: 'the API gave no verdict (see the error column): run again with --journal' },
  unverifiable: { action: 'retry', advice: 'nobody could tell: run again later, or validate with another engine' },
};

/** The next step for rows of `status` with `reason` ('' for none); `fixable`: a did-you-mean suggestion would fix it. */
export function nextStep(status: Status, reason: string, fixable = false): Step {
  // whatever made it not valid, a misspelt domain is what to correct first
  if (fixable) return BY_REASON.typo;
  // a valid row has no reason; the mailbox check's reasons are unknown rows, retried later
  return (BY_REASON as Record<string, Step | undefined>)[reason] ?? BY_STATUS[status];
}
