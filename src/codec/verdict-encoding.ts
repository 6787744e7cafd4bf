import { isDomainOf } from './address-key.js';
import { crc32, hex8 } from './crc32.js';
import type { Details, DnsFailure, MailboxTrouble, SmtpFailure, Status, Verdict } from '../verdict.js';

/*
 * One verdict per line, as a short JSON array so that any address (quotes,
 * commas, non-ASCII) round-trips through JSON's own escaping:
 *
 *   ["ann@example.com","v11100-a",0.95,"mailgun",1,"5d0e4f0a"]
 *    email             code        confidence provider domain [suggestion] [mailbox] checksum
 *
 * A cache's line leads with the time the verdict was obtained (epoch seconds):
 * `[1718000000,"ann@example.com",...]`; that is the line's prefix.
 *
 * code = status letter, then isValid, syntax, mx, disposable, role, free as
 * 1 / 0 / - (not told), then the evidence the verdict rests on (see Evidence):
 * s, d, m or a. domain is 1 when it equals the address's own domain part (the
 * common case, so a million-line journal stays small), null when not told,
 * else the string. An unknown confidence is null. `error` is never encoded:
 * rows without a verdict are not stored (a re-run must retry them).
 *
 * mailbox (the SMTP check) is two characters, smtp then catchAll as 1 / 0 /
 * -, present only when one of them is told or a cause is; the suggestion before
 * it is then null when there is none. Up to three more characters carry the
 * causes behind a row's reason, '-' where none: dnsFailure (n nxdomain, z null
 * MX, h no mail host, u unanswered), smtpFailure (u unreachable, t timeout, g
 * greylisted, b blocked, s sender refused, 8 no SMTPUTF8), mailbox (f full, d
 * disabled); trailing '-' are left off.
 *
 * checksum = CRC-32 of the line's text before `,"` and the checksum itself, as
 * 8 lower-case hex digits. A line whose checksum does not hold is damaged: its
 * address is asked again, never read as another verdict. So is a line that is
 * not exactly as this encoder writes it (a field out of its alphabet, a number
 * spelt otherwise). Lines of the first format (a 7-letter code, no evidence,
 * no checksum) are recognised as such (`older`) and never reused either.
 */

/**
 * What a verdict rests on, as asked by the run that made it: syntax and the
 * lists only (`--no-dns`), DNS too, the mailbox over SMTP too (`--smtp`), or
 * the API. A run that asks for more evidence than a stored verdict rests on
 * asks again (see suffices).
 */
export type Evidence = 'syntax' | 'dns' | 'smtp' | 'api';

const EVIDENCE_LETTER: Record<Evidence, string> = { syntax: 's', dns: 'd', smtp: 'm', api: 'a' };
const OFFLINE_DEPTH: Partial<Record<Evidence, number>> = { syntax: 0, dns: 1, smtp: 2 };

/**
 * A verdict resting on `stored` answers a run asking for `asked`: the same, or
 * the offline engine's deeper checks (an SMTP verdict answers a DNS run, not
 * the other way round). The API's verdicts answer only the API (and stores
 * are bound to one engine anyway).
 */
export function suffices(stored: Evidence, asked: Evidence): boolean {
  if (stored === asked) return true;
  const s = OFFLINE_DEPTH[stored];
  const a = OFFLINE_DEPTH[asked];
  return s !== undefined && a !== undefined && s > a;
}

const CODE_STATUS: Record<string, Status> = { v: 'valid', i: 'invalid', r: 'risky', u: 'unknown' };
const FLAGS = ['syntax', 'mx', 'disposable', 'role', 'free'] as const;

function untri(c: string | undefined): boolean | undefined {
  return c === '1' ? true : c === '0' ? false : undefined;
}

function ownDomain(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1);
}

const TRI_INDEX = (b: boolean | undefined): number => (b === undefined ? 2 : b ? 1 : 0);
const STATUS_INDEX: Record<Status, number> = { valid: 0, invalid: 1, risky: 2, unknown: 3 };
/** every possible code (without its evidence letter), looked up by number: building 7-character strings per verdict showed in profiles */
const CODES: string[] = [];
for (const status of ['v', 'i', 'r', 'u']) {
  for (let n = 0; n < 729; n++) {
    let code = status;
    for (let k = 5; k >= 0; k--) code += '01-'[Math.floor(n / 3 ** k) % 3];
    CODES.push(code);
  }
}

function codeOf(v: Verdict): string {
  const d = v.details;
  const n =
    TRI_INDEX(v.isValid) * 243 + TRI_INDEX(d.syntax) * 81 + TRI_INDEX(d.mx) * 27 + TRI_INDEX(d.disposable) * 9 + TRI_INDEX(d.role) * 3 + TRI_INDEX(d.free);
  return CODES[STATUS_INDEX[v.status] * 729 + n]!;
}

/** JSON.stringify of a string, skipping the serialiser for the usual plain address */
function quote(s: string): string {
  return PLAIN.test(s) ? '"' + s + '"' : JSON.stringify(s);
}

/** what, between quotes, JSON reads as other than itself (or refuses) */
const ESCAPED = /[\\\u0000-\u001f]/;

/** a string JSON writes as it is, between quotes */
const PLAIN = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

const tri = (b: boolean | undefined): string => (b === undefined ? '-' : b ? '1' : '0');

const DNS_CODE: Record<DnsFailure, string> = { nxdomain: 'n', 'null-mx': 'z', 'no-mail-host': 'h', unanswered: 'u' };
const SMTP_CODE: Record<SmtpFailure, string> = { unreachable: 'u', timeout: 't', greylisted: 'g', blocked: 'b', 'sender-refused': 's', 'no-utf8': '8' };
const MAILBOX_CODE: Record<MailboxTrouble, string> = { full: 'f', disabled: 'd' };
const inverse = <K extends string>(codes: Record<K, string>): Record<string, K> =>
  Object.fromEntries(Object.entries(codes).map(([k, c]) => [c, k])) as Record<string, K>;
const CODE_DNS = inverse(DNS_CODE);
const CODE_SMTP = inverse(SMTP_CODE);
const CODE_MAILBOX = inverse(MAILBOX_CODE);
const LETTER_EVIDENCE = inverse(EVIDENCE_LETTER);
/** the code with its evidence letter, and the mailbox field as the encoder writes it (no trailing '-') */
const CODE_FIELD = /^[viru][01-]{6}[sdma]$/;
const MAILBOX_FIELD = /^[01-][01-](?:[nzhu-](?:[utgbs8-][fd-]?)?)?$/;
/** a code of the first format */
const OLDER_CODE = /^[viru][01-]{6}$/;

/**
 * smtp and catchAll as two characters, then the causes, or undefined when
 * none is told (most lines).
 */
function mailboxCode(d: Details): string | undefined {
  const { dnsFailure, smtpFailure, mailbox } = d;
  if (dnsFailure === undefined && smtpFailure === undefined && mailbox === undefined) {
    return d.smtp === undefined && d.catchAll === undefined ? undefined : tri(d.smtp) + tri(d.catchAll);
  }
  let code = tri(d.smtp) + tri(d.catchAll) + (dnsFailure === undefined ? '-' : DNS_CODE[dnsFailure]);
  code += (smtpFailure === undefined ? '-' : SMTP_CODE[smtpFailure]) + (mailbox === undefined ? '-' : MAILBOX_CODE[mailbox]);
  return code.replace(/-+$/, '');
}

/**
 * The tail of a verdict: every field after the address and before the
 * checksum, `"v11100-a",0.95,"mailgun",1`. `own`: the verdict's domain is the
 * address's own (written 1).
 */
function tailText(v: Verdict, code: string, letter: string, own: boolean, mailbox = mailboxCode(v.details)): string {
  const d = v.details;
  const c = v.confidence;
  let tail = '"' + code + letter + '",' + (c !== undefined && Number.isFinite(c) ? String(c) : 'null') + ',' + JSON.stringify(v.provider) + ',';
  tail += d.domain === undefined ? 'null' : own ? '1' : JSON.stringify(d.domain);
  if (d.suggestion !== undefined) tail += ',' + JSON.stringify(d.suggestion);
  else if (mailbox !== undefined) tail += ',null';
  if (mailbox !== undefined) tail += ',"' + mailbox + '"';
  return tail;
}

/** `,"<checksum>"]`: what ends the line whose text before it is `body` */
function sealed(body: string): string {
  return body + ',"' + hex8(crc32(body)) + '"]';
}

/**
 * Writes verdicts as lines, and their tails: everything after the address,
 * `"v11100-a",0.95,"mailgun",1` (see tailText) — the one encoding of a
 * verdict without its address. It remembers the tail of the last line: a run's
 * verdicts come in long runs that differ only in the address, so the tail is
 * built once per run of them. One per writer (a journal, a cache, the dedupe
 * memo), so that no state is shared between them.
 */
export class VerdictEncoder {
  private last: { code: string; confidence: number | undefined; provider: string; domain: 0 | 1; mailbox: string | undefined; tail: string } | undefined;
  private readonly letter: string;

  /**
   * `evidence`: what the verdicts this encoder writes rest on (see Evidence).
   * The dedupe memo, whose tails never leave the run, gives none.
   */
  constructor(evidence?: Evidence) {
    this.letter = evidence === undefined ? '' : EVIDENCE_LETTER[evidence];
  }

  /** The tail of `v`. `own`: its domain is the domain part of the address it is filed under. */
  private tailOf(v: Verdict, code: string, own = ownDomainTold(v.details, v.email)): string {
    const d = v.details;
    const last = this.last;
    // Shared tails only for a domain that is the address's own (or not told), without a suggestion.
    const shared = d.suggestion === undefined && (d.domain === undefined || own);
    const domain = d.domain === undefined ? 0 : 1;
    const mailbox = mailboxCode(d);
    if (
      shared &&
      last &&
      last.code === code &&
      last.confidence === v.confidence &&
      last.provider === v.provider &&
      last.domain === domain &&
      last.mailbox === mailbox
    ) {
      return last.tail;
    }
    const tail = tailText(v, code, this.letter, own, mailbox);
    if (shared) this.last = { code, confidence: v.confidence, provider: v.provider, domain, mailbox, tail };
    return tail;
  }

  /**
   * The tail of `v` filed under `address` when other addresses can share it —
   * no suggestion, and no domain but the address's own — else undefined. The
   * dedupe memo keeps one verdict per distinct shared tail.
   */
  sharedTail(v: Verdict, address: string): string | undefined {
    const d = v.details;
    const own = ownDomainTold(d, address);
    if (d.suggestion !== undefined || (d.domain !== undefined && !own)) return undefined;
    return this.tailOf(v, codeOf(v), own);
  }

  /** The line of `v` (with `prefix` as a leading field: the cache's time), checksum included, without its newline. */
  line(v: Verdict, prefix?: number): string {
    const head = prefix === undefined ? '[' : `[${prefix},`;
    return sealed(head + quote(v.email) + ',' + this.tailOf(v, codeOf(v)));
  }

  /**
   * The NDJSON lines of `verdicts`. A row with `error` got no verdict:
   * recording it would stop a re-run from retrying the address (the stores
   * keep only what is final, see keptBy; this is the encoding's own guard).
   */
  lines(verdicts: readonly Verdict[], prefix?: number): string {
    // Few pieces per line: every concatenation leaves a short-lived string for the
    // garbage collector, and a million lines make that count.
    const open = prefix === undefined ? '["' : `[${prefix},"`;
    let text = '';
    for (const v of verdicts) {
      if (v.error) continue;
      text += (PLAIN.test(v.email) ? sealed(open + v.email + '",' + this.tailOf(v, codeOf(v))) : this.line(v, prefix)) + '\n';
    }
    return text;
  }
}

/** The line (without its newline) of a verdict read back: `tail` as TailPool.read gave it, filed under `email`. */
export function storedLine(email: string, tail: string, prefix?: number): string {
  return sealed((prefix === undefined ? '[' : `[${prefix},`) + quote(email) + ',' + tail);
}

/** The verdict tells a domain, and it is the domain part of `address`. */
function ownDomainTold(d: Details, address: string): boolean {
  return d.domain !== undefined && isDomainOf(d.domain, address);
}

/** What a tail holds: the verdict (its address left empty), whether its domain is its address's own, and its evidence. */
interface Decoded {
  template: Verdict;
  own: boolean;
  evidence: Evidence;
}

/**
 * The fields of a tail parsed (`fields`), read back strictly: every field in
 * its alphabet and range, or undefined (damage). Keys are set in one fixed
 * order, only when told, so that a verdict read back serialises exactly like
 * the one the engine gave (byte-identical re-runs).
 */
function decodeFields(fields: unknown[]): Decoded | undefined {
  if (fields.length < 4 || fields.length > 6) return undefined;
  const [code, confidence, provider, domain, suggestionOrNull, mailbox] = fields;
  if (typeof code !== 'string' || !CODE_FIELD.test(code)) return undefined;
  // null stands for "no suggestion" only before a mailbox field
  if (fields.length === 5 && typeof suggestionOrNull !== 'string') return undefined;
  const suggestion = fields.length === 6 && suggestionOrNull === null ? undefined : suggestionOrNull;
  if (mailbox !== undefined && (typeof mailbox !== 'string' || !MAILBOX_FIELD.test(mailbox))) return undefined;
  // 1e999 parses as Infinity: a number out of range is damage, not a verdict
  if (confidence !== null && (typeof confidence !== 'number' || !(confidence >= 0 && confidence <= 1))) return undefined;
  if (typeof provider !== 'string') return undefined;
  if (domain !== null && domain !== 1 && typeof domain !== 'string') return undefined;
  if (suggestion !== undefined && typeof suggestion !== 'string') return undefined;
  const details: Details = {};
  const syntax = untri(code[2]);
  if (syntax !== undefined) details.syntax = syntax;
  if (domain !== null) details.domain = domain === 1 ? '' : domain;
  FLAGS.slice(1).forEach((f, i) => {
    const b = untri(code[3 + i]);
    if (b !== undefined) details[f] = b;
  });
  if (suggestion !== undefined) details.suggestion = suggestion;
  if (mailbox !== undefined) {
    const smtp = untri(mailbox[0]);
    const catchAll = untri(mailbox[1]);
    if (smtp !== undefined) details.smtp = smtp;
    if (catchAll !== undefined) details.catchAll = catchAll;
    const dnsFailure = CODE_DNS[mailbox[2] ?? '-'];
    const smtpFailure = CODE_SMTP[mailbox[3] ?? '-'];
    const trouble = CODE_MAILBOX[mailbox[4] ?? '-'];
    if (dnsFailure !== undefined) details.dnsFailure = dnsFailure;
    if (smtpFailure !== undefined) details.smtpFailure = smtpFailure;
    if (trouble !== undefined) details.mailbox = trouble;
  }
  const template: Verdict = {
    email: '',
    isValid: untri(code[1]),
    status: CODE_STATUS[code[0]!]!,
    confidence: confidence ?? undefined,
    provider,
    details,
  };
  return { template, own: domain === 1, evidence: LETTER_EVIDENCE[code[7]!]! };
}

/** The verdict a decoded tail gives for `email`: fresh objects, so a caller may adjust its copy. */
function verdictFor(d: Decoded, email: string): Verdict {
  const t = d.template;
  const details = t.details.domain === undefined ? { ...t.details } : { ...t.details, domain: d.own ? ownDomain(email) : t.details.domain };
  return { ...t, email, details };
}

/** What a stored line holds (see TailPool.read). */
export type StoredLine =
  | { kind: 'verdict'; email: string; tail: string; prefix: number | undefined }
  /** a line of the first format (no checksum, no evidence): never reused; its address, for the count of those still unanswered */
  | { kind: 'older'; email: string }
  | { kind: 'damaged' };

const DAMAGED: StoredLine = { kind: 'damaged' };
/** `,"` + 8 hex digits + `"]`: how every line ends */
const SEAL = /,"([0-9a-f]{8})"\]$/;

/**
 * Reads stored lines, and keeps their tails in a pool: a store's index holds
 * `address → tail`, where the tail is the rest of the line after the address
 * (`"v11100-a",0.95,"p",1`). A big list has few distinct tails, so they are
 * pooled: one string, checked once and decoded once, shared by every address
 * with that verdict — a million-entry index costs little more than its keys,
 * and loads and answers without parsing a million lines twice.
 */
export class TailPool {
  private readonly pool = new Map<string, Decoded>();

  /** `prefixed`: each line leads with a number (the cache's time). */
  constructor(
    private readonly prefixed: boolean,
    private readonly max = 65_536,
  ) {}

  /**
   * One stored line: checked against its checksum, then read. A line written
   * as this program writes them, with a plain address and a tail already
   * pooled, is read without parsing it. The address returned is a slice of the
   * line: whatever keeps it keeps the line (the journal's index keeps only the
   * rare verdict it cannot share, see VerdictMemo).
   */
  read(line: string): StoredLine {
    const seal = SEAL.exec(line);
    const body = seal === null ? undefined : line.slice(0, seal.index);
    if (body === undefined || crc32(body) !== parseInt(seal![1]!, 16)) return this.older(line) ?? DAMAGED;
    if (body.charCodeAt(0) !== 0x5b) return DAMAGED;
    let at = 1;
    let prefix: number | undefined;
    if (this.prefixed) {
      const comma = body.indexOf(',');
      const digits = body.slice(1, comma);
      if (comma < 0 || !/^(?:0|[1-9][0-9]{0,15})$/.test(digits)) return DAMAGED;
      prefix = Number(digits);
      at = comma + 1;
    }
    if (body.charCodeAt(at) !== 0x22) return DAMAGED;
    const q = body.indexOf('"', at + 1);
    if (q > 0 && body.charCodeAt(q + 1) === 0x2c) {
      const email = body.slice(at + 1, q);
      const tail = body.slice(q + 2);
      if (!ESCAPED.test(email) && this.pool.has(tail)) return { kind: 'verdict', email, tail, prefix };
    }
    return this.parse(body, at, prefix);
  }

  /** A line that is not yet known to be plain: parsed, its tail checked and pooled. */
  private parse(body: string, at: number, prefix: number | undefined): StoredLine {
    let entry: unknown;
    try {
      entry = JSON.parse(body + ']');
    } catch {
      return DAMAGED;
    }
    const skip = this.prefixed ? 1 : 0;
    if (!Array.isArray(entry) || typeof entry[skip] !== 'string') return DAMAGED;
    const email = entry[skip] as string;
    const head = JSON.stringify(email) + ',';
    if (!body.startsWith(head, at)) return DAMAGED;
    const tail = body.slice(at + head.length);
    if (this.pool.has(tail)) return { kind: 'verdict', email, tail, prefix };
    const decoded = decodeFields(entry.slice(skip + 1));
    // exactly as the encoder writes it, or it is damage: no second spelling of a verdict
    if (!decoded || tailText(decoded.template, codeOf(decoded.template), EVIDENCE_LETTER[decoded.evidence], decoded.own) !== tail) return DAMAGED;
    // A slice of the line would keep the whole line alive: keep a flat copy.
    const flat = Buffer.from(tail, 'utf8').toString('utf8');
    if (this.pool.size < this.max) this.pool.set(flat, decoded);
    return { kind: 'verdict', email, tail: flat, prefix };
  }

  /** The address of a line of the first format, or undefined when the line is none. */
  private older(line: string): StoredLine | undefined {
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      return undefined;
    }
    const skip = this.prefixed ? 1 : 0;
    if (!Array.isArray(entry) || entry.length < 5 + skip || entry.length > 7 + skip) return undefined;
    const [email, code] = entry.slice(skip) as unknown[];
    if (typeof email !== 'string' || typeof code !== 'string' || !OLDER_CODE.test(code)) return undefined;
    return { kind: 'older', email };
  }

  /** The decoded tail (read gave it), pooled or, past the pool's cap, decoded again. */
  private decoded(tail: string): Decoded {
    return this.pool.get(tail) ?? decodeFields(JSON.parse('[' + tail + ']') as unknown[])!;
  }

  /** The verdict for `email` from a tail read gave. */
  verdict(email: string, tail: string): Verdict {
    return verdictFor(this.decoded(tail), email);
  }

  /** What the verdict of a tail read gave rests on. */
  evidence(tail: string): Evidence {
    return this.decoded(tail).evidence;
  }
}
