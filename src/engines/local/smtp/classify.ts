import type { Reply } from './reply.js';

/**
 * What a reply to `RCPT TO` says of the mailbox:
 *   accepted   250/251: the server takes mail for it
 *   refused    no such mailbox (5.1.1, 5.1.10, "user unknown", ...)
 *   disabled   the mailbox is there no more for a reason the server gives:
 *              disabled (X.2.1, "account disabled") or moved (X.1.6, "has moved")
 *   full       the mailbox exists but takes nothing now (552, 452 4.2.2)
 *   too-many   this transaction has too many recipients: ask again in a new one
 *   temporary  greylisting and other 4xx: ask again once, later
 *   closing    421, or a refusal that says the session ends for too many
 *              errors (Exim's "Too many failed recipients" before it drops
 *              the connection): the rest are asked in a new session at once
 *              when this one had answered some (dialogue.ts), else later
 *   sender     the server refused our reverse path (X.1.7, X.1.8, "Sender
 *              address rejected", "Sender verify failed"): says nothing about
 *              the mailbox; asked again with the null reverse path
 *   blocked    a policy refusal (X.7.x; the checker's IP, its reverse DNS, a
 *              blocklist): says nothing about the mailbox
 *   starttls   the server talks only after STARTTLS (530 5.7.0)
 *   unclear    any other refusal, a protocol error among them: says nothing
 *              certain about the mailbox
 *   no-utf8    never a reply's: the dialogue's, for a non-ASCII local part that
 *              a server without SMTPUTF8 (RFC 6531) is not asked about
 */
export type RcptOutcome =
  | 'accepted'
  | 'refused'
  | 'disabled'
  | 'full'
  | 'too-many'
  | 'temporary'
  | 'closing'
  | 'sender'
  | 'blocked'
  | 'starttls'
  | 'unclear'
  | 'no-utf8';

/**
 * What a refusal is about. A reply is read by its enhanced status code (RFC
 * 3463: class.subject.detail) and by its subject — whose address the server
 * names (Postfix: "<x>: Sender address rejected:") — before its words, and
 * only by its own words: text it quotes from another server is about that
 * server's dialogue, not ours.
 *   mailbox   the recipient's mailbox does not exist
 *   disabled  the recipient's mailbox is disabled or has moved
 *   full      the recipient's mailbox is over its quota
 *   sender    our reverse path
 *   policy    a policy: the checker's IP or name, blocklists, SPF, relaying
 *   tls       the server wants STARTTLS first
 *   protocol  the dialogue itself (X.5.x, X.6.x, 500-504): a command or parameter it will not take
 *   other     anything else (the mail system, routing, no telling)
 */
export type About = 'mailbox' | 'disabled' | 'full' | 'sender' | 'policy' | 'tls' | 'protocol' | 'other';

/**
 * Where a reply starts quoting another server, within one of its lines:
 * Postfix's `host mx.example[192.0.2.1] said: 550 5.1.1 ... (in reply to RCPT
 * TO command)` (reject_unverified_sender/recipient, relays), Exim's `response
 * to "RCPT TO:<x>" was: 550 ...`, and a reply code with its enhanced code, or
 * a 4xx/5xx after a colon, inside the text (`Callout verification failed: 550 ...`).
 */
const QUOTE_START =
  /\b(?:host|server)\s+\S+\s+(?:said|says|replied|responded)\b|\b(?:said|replied|responded|returned|was)\s*:|\bresponse(?: was)?\s*:|\bin reply to\b|\b[245]\d\d[ -]#?[245]\.\d{1,3}\.\d{1,3}\b|(?:^|:\s*)[45]\d\d(?=[ -]|$)/i;

/** Exim's callout report puts the other server's dialogue on lines of their own: `Called: ...`, `Sent: ...`, `Response: ...` */
const QUOTE_LINE = /^(?:called|sent|response|remote host said)\s*:/i;

/** The reply's own words: its lines without what they quote from another server. */
export function ownWords(r: Reply): string {
  const own: string[] = [];
  for (const line of r.lines) {
    if (QUOTE_LINE.test(line)) continue;
    const q = QUOTE_START.exec(line);
    own.push(q ? line.slice(0, q.index) : line);
  }
  return own.join(' ').trim();
}

/**
 * The subject a server names, as Postfix writes it (`<x>: Recipient address
 * rejected: ...`, `Sender address rejected`, `Client host rejected`, `Helo
 * command rejected`) and Exim (`Sender verify failed`): the first one in its
 * own words is what the refusal is about, whatever words follow.
 */
const SUBJECT =
  /\b(sender|recipient|client host|helo command|data command|relay access|sender verify|recipient verify)\b(?: address)? (?:rejected|denied|failed)\b/i;
const SUBJECT_ABOUT: Record<string, About | 'recipient'> = {
  sender: 'sender',
  'sender verify': 'sender',
  recipient: 'recipient',
  'recipient verify': 'recipient',
  'client host': 'policy',
  'helo command': 'policy',
  'data command': 'policy',
  'relay access': 'policy',
};

/**
 * Words servers use for a policy refusal: of the checker (a blocklisted IP, no
 * reverse DNS, a poor reputation), of relaying, of unauthenticated mail, of
 * bounces to addresses that sent nothing (backscatter protection, which
 * refuses the null reverse path). Collected from real replies quoted in
 * reacherhq/check-if-email-exists (core/src/smtp/parser.rs), the Postfix,
 * Exim and Microsoft 365 documentation and published bounces. Read before the
 * mailbox words: a reply that could be either is not evidence against the address.
 */
const POLICY =
  /black ?list|block ?list|blocklisted|blacklisted|spamhaus|spamcop|barracuda|abusix|proofpoint|dnsbl|\brbl\b|reverse (dns|hostname)|rdns|\bptr\b|client host|your ip|sender ip|sending ip|\bip address\b|reputation|banned|access denied|administratively denied|relay(ing)? (access )?(denied|not permitted)|not (yet )?authori[sz]ed|not allowed|junk ?mail|\bspam\b|backscatter|\bspf\b|\bdkim\b|\bdmarc\b|unauthenticated|not authenticated|policy/i;

/** Words about our reverse path, in a reply that names no recipient (see SUBJECT). */
const SENDER =
  /\bsender\b|\bmail from\b|\breverse[- ]path\b|\breturn[- ]path\b|\bbounce address\b|\bfrom address\b|\benvelope from\b|\bnull (?:sender|reverse)|\bempty (?:sender|envelope)|\bmailer[- ]daemon\b/i;

/**
 * Words that mean "no such mailbox" in replies without a helpful enhanced
 * code. Same sources; they count only on 550/551/553, and only in the reply's
 * own words.
 */
const NO_MAILBOX =
  /user unknown|unknown user|no such (user|mailbox|recipient|person|address)|(recipient|mailbox|user|address) (not found|unknown|does not exist|doesn't exist)|does not exist|invalid (recipient|mailbox|address|email address)|recipient (address )?rejected|unknown (recipient|local part|address)|mailbox unavailable|mailbox is unavailable|not a valid mailbox|no mailbox|unrouteable address|undeliverable address|(account|mailbox) (is )?(disabled|inactive|discontinued)|no longer available|could not be found|utilisateur inconnu|doesn't have an? (\S+ )?account/i;

/**
 * Words for a mailbox that is there no more for a reason (Gmail's "account
 * ... is disabled", Microsoft's "mailbox disabled", "user has moved"): read
 * before NO_MAILBOX, on the same codes.
 */
const DISABLED =
  /\b(?:account|mailbox|user|address)\b[^.;]{0,40}?\b(?:is |has been )?(?:disabled|deactivated|suspended|inactive|discontinued)\b|\b(?:user|mailbox|recipient) has moved\b/i;

const FULL = /mailbox (is )?full|over ?quota|quota exceeded|exceeded (storage|quota)|insufficient (system )?storage|out of storage|too many messages/i;

const TOO_MANY = /too many recipients|recipient limit|too many rcpt/i;

/** anti-harvest limits: Exim's common ACL ("Too many failed recipients"), Postfix's smtpd_hard_error_limit ("421 4.7.0 Error: too many errors") */
const TOO_MANY_ERRORS = /too many (failed|invalid|bad|unknown|rejected) (recipients|rcpts?|addresses)|too many errors/i;

/** STARTTLS wanted: Postfix and Sendmail `530 5.7.0 Must issue a STARTTLS command first`, Exim `530 Must issue a STARTTLS command first` */
const TLS_WANTED = /starttls|\btls\b|encryption (needed|required)/i;

/**
 * A server that has too many of our sessions open: Exim's
 * `smtp_accept_max_per_host` ("421 Too many concurrent SMTP connections from
 * this IP"), Postfix's anvil ("421 4.7.0 Error: too many connections from"),
 * Sendmail's "Too many open connections".
 */
const TOO_MANY_CONNECTIONS =
  /too many (concurrent |open |simultaneous )?(smtp )?(connections|sessions)|connection (limit|count limit)|too many connections from/i;

/** `[class, subject, detail]` of the enhanced code, or undefined */
function enhancedOf(r: Reply): [number, number, number] | undefined {
  if (r.enhanced === undefined) return undefined;
  const [c, s, d] = r.enhanced.split('.').map(Number) as [number, number, number];
  return [c, s, d];
}

/**
 * What a refusal is about, first rule that holds wins: the enhanced code's
 * sender subjects, the subject the server names, STARTTLS wanted, a policy
 * (by code, then by word), the sender by word, the protocol, then the
 * mailbox (full, by code, by word). A reply about the sender, a policy or the
 * protocol is never read as being about the mailbox, whatever else it says.
 */
export function aboutOf(r: Reply): About {
  const e = enhancedOf(r);
  const [, subject, detail] = e ?? [];
  // RFC 3463 X.1.7 bad sender's mailbox address syntax, X.1.8 bad sender's system address
  if (subject === 1 && (detail === 7 || detail === 8)) return 'sender';
  const own = ownWords(r);
  const named = SUBJECT.exec(own);
  const about = named ? SUBJECT_ABOUT[named[1]!.toLowerCase()] : undefined;
  if (about !== undefined && about !== 'recipient') return about;
  // X.7.0 other security, X.7.10 encryption needed, X.7.11 encryption required for the mechanism
  if ((r.code === 530 || (subject === 7 && (detail === 0 || detail === 10 || detail === 11))) && TLS_WANTED.test(own)) return 'tls';
  if (subject === 7) return 'policy';
  if (POLICY.test(own)) return 'policy';
  if (about === undefined && SENDER.test(own)) return 'sender';
  if (subject === 2 && detail === 2) return 'full';
  // X.5.x protocol, X.6.x message content (X.6.7: a non-ASCII address the server cannot take, RFC 6531);
  // "550 5.5.0 mailbox full" is a server misusing X.5.0 ("other protocol status")
  if (subject === 5 || subject === 6) return subject === 5 && detail === 0 && FULL.test(own) ? 'full' : 'protocol';
  if ((e === undefined && r.code >= 500 && r.code <= 504) || r.code === 555) return 'protocol';
  // X.1.1 bad destination mailbox, X.1.10 recipient address has null MX; X.1.6 moved, X.2.1 disabled
  if (subject === 1 && (detail === 1 || detail === 10)) return 'mailbox';
  if ((subject === 1 && detail === 6) || (subject === 2 && detail === 1)) return 'disabled';
  // the other codes are about something else (X.1.2 the domain, X.1.3 syntax, X.3 the mail system, X.4 routing);
  // X.0.0, X.1.0 and X.2.0 say only "an address", "a mailbox": the words tell
  if (e !== undefined && !(detail === 0 && subject !== undefined && subject <= 2)) return 'other';
  if (r.code === 552 || FULL.test(own)) return 'full';
  if (r.code === 550 || r.code === 551 || r.code === 553) {
    if (DISABLED.test(own)) return 'disabled';
    if (NO_MAILBOX.test(own)) return 'mailbox';
  }
  return 'other';
}

const REFUSAL: Record<About, RcptOutcome> = {
  mailbox: 'refused',
  disabled: 'disabled',
  full: 'full',
  sender: 'sender',
  policy: 'blocked',
  tls: 'starttls',
  protocol: 'unclear',
  other: 'unclear',
};

/** The outcome of a `RCPT TO` reply; anything else (1xx, 3xx, 252) is unclear. The table-driven test (test/engines/local/smtp-replies.test.ts) pins each kind. */
export function classifyRcpt(r: Reply): RcptOutcome {
  if (r.code === 250 || r.code === 251) return 'accepted';
  if (r.code === 421 || (r.code >= 400 && TOO_MANY_ERRORS.test(ownWords(r)))) return 'closing';
  // RFC 5321 §4.5.3.1.10: 452 for too many recipients; some servers say 552 5.5.3,
  // OpenSMTPD says "451 4.5.3 Too many recipients"
  if ((r.code === 451 || r.code === 452 || r.code === 552) && (/^[45]\.5\.3$/.test(r.enhanced ?? '') || TOO_MANY.test(ownWords(r)))) return 'too-many';
  if (r.code >= 400 && r.code < 500) {
    const about = aboutOf(r);
    // 452 4.2.2: full, it will not take mail now either; a 4xx about the sender (Postfix's default
    // 450 4.1.7 for an unverified sender) is a refusal of the sender. Any other 4xx — greylisting
    // ("451 4.7.1 greylisted, come back later"), a busy server, a temporary block — is asked again once, later.
    if (about === 'full' && (r.code === 452 || r.enhanced === '4.2.2')) return 'full';
    return about === 'sender' ? 'sender' : 'temporary';
  }
  if (r.code >= 500 && r.code < 600) {
    const outcome = REFUSAL[aboutOf(r)];
    // words alone say "no such mailbox" only on the codes RFC 5321 gives it (550, 551, 553); an enhanced code says so on any 5xx
    if ((outcome === 'refused' || outcome === 'disabled') && r.enhanced === undefined && ![550, 551, 553].includes(r.code)) return 'unclear';
    return outcome;
  }
  return 'unclear';
}

/** A reply saying the server has too many of our connections (any step): that host gets one session at a time, after a pause. */
export function isBusy(r: Reply): boolean {
  return r.code >= 400 && r.code < 500 && TOO_MANY_CONNECTIONS.test(r.text);
}

/**
 * What a reply to anything but RCPT (the banner, EHLO, MAIL FROM, RSET) means
 * for the session: go on; end it for now (ask again later); the sender was
 * refused (ask again with the null reverse path); STARTTLS first; or give up
 * on the domain for this run — a checker blocked by policy, or a server that
 * will not talk.
 */
export type StepOutcome = 'ok' | 'temporary' | 'sender' | 'starttls' | 'blocked' | 'failed';

export function classifyStep(r: Reply, command?: 'MAIL'): StepOutcome {
  if (r.code >= 200 && r.code < 400) return 'ok';
  const about = aboutOf(r);
  if (r.code >= 400 && r.code < 500) return command === 'MAIL' && about === 'sender' ? 'sender' : 'temporary';
  if (about === 'tls') return 'starttls';
  if (about === 'policy') return 'blocked';
  // a 554 banner ("no SMTP service here")
  if (command === undefined) return r.code === 554 ? 'blocked' : 'failed';
  // MAIL FROM refused for anything but the protocol is a refusal of the reverse path
  return about === 'protocol' ? 'failed' : 'sender';
}
