import type { Reply } from './reply.js';

/**
 * What a reply to `RCPT TO` says of the mailbox:
 *   accepted   250/251: the server takes mail for it
 *   refused    no such mailbox (550/551/553 with a mailbox reason, 5.1.1, ...)
 *   full       the mailbox exists but takes nothing now (552, 452 4.2.2)
 *   too-many   this transaction has too many recipients: ask again in a new one
 *   temporary  greylisting and other 4xx: ask again once, later
 *   closing    421: the server is ending the session
 *   blocked    a policy block of the checker itself (its IP, its reverse DNS, a
 *              blocklist): says nothing about the mailbox
 *   unclear    any other refusal: says nothing certain about the mailbox
 */
export type RcptOutcome = 'accepted' | 'refused' | 'full' | 'too-many' | 'temporary' | 'closing' | 'blocked' | 'unclear';

interface Rule {
  outcome: RcptOutcome;
  /** reply codes, or a first digit ('4xx', '5xx') */
  codes?: readonly number[] | '4xx' | '5xx';
  /** the enhanced status code, whole (`^5\.1\.1$`) or by class and subject */
  enhanced?: RegExp;
  /** matched against the reply's text, case-insensitively */
  phrase?: RegExp;
}

/**
 * Words servers use when they refuse the *sender*: a blocklisted IP, no
 * reverse DNS, a poor reputation. Collected from real replies quoted in
 * reacherhq/check-if-email-exists (core/src/smtp/parser.rs) and the Postfix,
 * Exim and Microsoft 365 documentation. Checked before the mailbox phrases:
 * when a reply could be either, it is not evidence against the address.
 */
const CHECKER_BLOCKED =
  /black ?list|block ?list|blocklisted|blacklisted|spamhaus|spamcop|barracuda|abusix|dnsbl|\brbl\b|reverse (dns|hostname)|rdns|\bptr\b|client host|your ip|sender ip|sending ip|\bip address\b|reputation|banned|access denied|administratively denied|relay(ing)? (access )?(denied|not permitted)|not (yet )?authori[sz]ed|junk ?mail|\bspam\b|policy/i;

/**
 * Phrases that mean "no such mailbox" in replies without a helpful enhanced
 * code. Same sources; a phrase alone counts only on 550/551/553.
 */
const NO_MAILBOX =
  /user unknown|unknown user|no such (user|mailbox|recipient|person|address)|(recipient|mailbox|user|address) (not found|unknown|does not exist|doesn't exist)|does not exist|invalid (recipient|mailbox|address|email address)|recipient (address )?rejected|unknown (recipient|local part|address)|mailbox unavailable|mailbox is unavailable|not a valid mailbox|no mailbox|address error|unrouteable address|undeliverable address|(account|mailbox) (is )?(disabled|inactive|discontinued)|no longer available|could not be found/i;

const FULL = /mailbox (is )?full|over ?quota|quota exceeded|exceeded (storage|quota)|insufficient (system )?storage|too many messages/i;

const TOO_MANY = /too many recipients|recipient limit|too many rcpt/i;

/**
 * A server that has too many of our sessions open: Exim's
 * `smtp_accept_max_per_host` ("421 Too many concurrent SMTP connections from
 * this IP"), Postfix's anvil ("421 4.7.0 Error: too many connections from"),
 * Sendmail's "Too many open connections".
 */
const TOO_MANY_CONNECTIONS = /too many (concurrent |open |simultaneous )?(smtp )?(connections|sessions)|connection (limit|count limit)|too many connections from/i;

/** First rule that matches wins. The table-driven test (test/local/smtp-classify.test.ts) pins each row. */
export const RCPT_RULES: readonly Rule[] = [
  { outcome: 'accepted', codes: [250, 251] },
  { outcome: 'closing', codes: [421] },
  // RFC 5321 §4.5.3.1.10: 452 for too many recipients; some servers say 552 5.5.3,
  // OpenSMTPD says "451 4.5.3 Too many recipients"
  { outcome: 'too-many', codes: [451, 452, 552], enhanced: /^[45]\.5\.3$/ },
  { outcome: 'too-many', codes: [451, 452, 552], phrase: TOO_MANY },
  // X.2.2: mailbox full (452 4.2.2 too: it will not take mail now either)
  { outcome: 'full', codes: [452, 552], enhanced: /^[45]\.2\.2$/ },
  // Any other 4xx — greylisting ("451 4.7.1 greylisted, come back later"), a
  // busy server, even a temporary block — is asked again once, later.
  { outcome: 'temporary', codes: '4xx' },
  // RFC 3463 5.7.X: security or policy status — about the checker, not the mailbox
  { outcome: 'blocked', codes: '5xx', enhanced: /^5\.7\.\d+$/ },
  { outcome: 'blocked', codes: '5xx', phrase: CHECKER_BLOCKED },
  { outcome: 'full', codes: '5xx', enhanced: /^5\.2\.2$/ },
  { outcome: 'full', codes: [552] },
  { outcome: 'full', codes: [550, 554], phrase: FULL },
  // X.1.1 bad destination mailbox, X.1.10 recipient address has null MX,
  // X.1.6 mailbox has moved, X.2.1 mailbox disabled: the address is dead
  { outcome: 'refused', codes: '5xx', enhanced: /^5\.(1\.1|1\.10|1\.6|2\.1)$/ },
  { outcome: 'refused', codes: [550, 551, 553], phrase: NO_MAILBOX },
  { outcome: 'unclear', codes: '5xx' },
];

function matches(rule: Rule, r: Reply): boolean {
  if (rule.codes !== undefined) {
    if (rule.codes === '4xx' || rule.codes === '5xx') {
      if (Math.floor(r.code / 100) !== Number(rule.codes[0])) return false;
    } else if (!rule.codes.includes(r.code)) return false;
  }
  if (rule.enhanced && !(r.enhanced !== undefined && rule.enhanced.test(r.enhanced))) return false;
  if (rule.phrase && !rule.phrase.test(r.text)) return false;
  return true;
}

/** The outcome of a `RCPT TO` reply; anything no rule names (1xx, 3xx) is unclear. */
export function classifyRcpt(r: Reply): RcptOutcome {
  for (const rule of RCPT_RULES) if (matches(rule, r)) return rule.outcome;
  return 'unclear';
}

/** A reply saying the server has too many of our connections (any step): that host gets one session at a time, after a pause. */
export function isBusy(r: Reply): boolean {
  return r.code >= 400 && r.code < 500 && TOO_MANY_CONNECTIONS.test(r.text);
}

/**
 * What a reply to anything but RCPT (the banner, EHLO, MAIL FROM) means for the
 * session: go on, end it for now (ask again later), or give up on the domain
 * for this run — a checker blocked by policy, or a server that will not talk.
 */
export type StepOutcome = 'ok' | 'temporary' | 'blocked' | 'failed';

export function classifyStep(r: Reply): StepOutcome {
  if (r.code >= 200 && r.code < 400) return 'ok';
  if (r.code >= 400 && r.code < 500) return 'temporary';
  if (classifyRcpt(r) === 'blocked') return 'blocked';
  // a 554 banner ("no SMTP service here") or a refused MAIL FROM without a reason
  return r.code === 554 ? 'blocked' : 'failed';
}
