import { isDomainOf } from './address-key.js';
import type { Details, DnsFailure, MailboxTrouble, SmtpFailure, Status, Verdict } from '../verdict.js';

/*
 * One verdict per line, as a short JSON array so that any address (quotes,
 * commas, non-ASCII) round-trips through JSON's own escaping:
 *
 *   ["ann@example.com","v11100-",0.95,"mailgun",1]
 *    email             code       confidence provider domain [suggestion] [mailbox]
 *
 * code = status letter, then isValid, syntax, mx, disposable, role, free as
 * 1 / 0 / - (not told). domain is 1 when it equals the address's own domain
 * part (the common case, so a million-line journal stays small), null when not
 * told, else the string. An unknown confidence is null. `error` is never
 * encoded: rows without a verdict are not stored (a re-run must retry them).
 *
 * mailbox (the SMTP check, added later: lines without it still read) is two
 * characters, smtp then catchAll as 1 / 0 / -, present only when one of them
 * is told; the suggestion before it is then null when there is none. Up to
 * three more characters (added later still) carry the causes behind a row's
 * reason, '-' where none: dnsFailure (n nxdomain, z null MX, h no mail host,
 * u unanswered), smtpFailure (u unreachable, t timeout, g greylisted, b
 * blocked, s sender refused, 8 no SMTPUTF8), mailbox (f full, d disabled); trailing '-' are left off.
 */
export type EncodedVerdict = [string, string, number | null, string, string | 1 | null, (string | null)?, string?];

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
/** every possible code, looked up by number: building 7-character strings per verdict showed in profiles */
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
    TRI_INDEX(v.isValid) * 243 + TRI_INDEX(d.syntax) * 81 + TRI_INDEX(d.mx) * 27 +
    TRI_INDEX(d.disposable) * 9 + TRI_INDEX(d.role) * 3 + TRI_INDEX(d.free);
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

export function encodeVerdict(v: Verdict): EncodedVerdict {
  const d = v.details;
  const code = codeOf(v);
  const domain = d.domain === undefined ? null : isDomainOf(d.domain, v.email) ? 1 : d.domain;
  const out: EncodedVerdict = [v.email, code, v.confidence ?? null, v.provider, domain];
  const mailbox = mailboxCode(d);
  if (d.suggestion !== undefined || mailbox !== undefined) out.push(d.suggestion ?? null);
  if (mailbox !== undefined) out.push(mailbox);
  return out;
}

const tri = (b: boolean | undefined): string => (b === undefined ? '-' : b ? '1' : '0');

const DNS_CODE: Record<DnsFailure, string> = { nxdomain: 'n', 'null-mx': 'z', 'no-mail-host': 'h', unanswered: 'u' };
const SMTP_CODE: Record<SmtpFailure, string> = { unreachable: 'u', timeout: 't', greylisted: 'g', blocked: 'b', 'sender-refused': 's', 'no-utf8': '8' };
const MAILBOX_CODE: Record<MailboxTrouble, string> = { full: 'f', disabled: 'd' };
const inverse = <K extends string>(codes: Record<K, string>): Record<string, K> =>
  Object.fromEntries(Object.entries(codes).map(([k, c]) => [c, k])) as Record<string, K>;
const CODE_DNS = inverse(DNS_CODE);
const CODE_SMTP = inverse(SMTP_CODE);
const CODE_MAILBOX = inverse(MAILBOX_CODE);
const MAILBOX_FIELD = /^[01-][01-](?:[nzhu-](?:[utgbs8-][fd-]?)?)?$/;

/**
 * smtp and catchAll as two characters, then the causes, or undefined when
 * none is told (every line before the SMTP check, and most lines since).
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
 * Writes verdicts as lines, and their tails: everything after the address,
 * `"v11100-",0.95,"mailgun",1]` (see encodeVerdict) — the one encoding of a
 * verdict without its address. It remembers the tail of the last line: a run's
 * verdicts come in long runs that differ only in the address, so the rest of
 * the line is built once per run of them. One per writer (a journal, a cache,
 * the dedupe memo), so that no state is shared between them.
 */
export class VerdictEncoder {
  private last:
    | { code: string; confidence: number | undefined; provider: string; domain: 0 | 1; mailbox: string | undefined; tail: string; end: string }
    | undefined;

  /**
   * The tail of `v`. The domain is 1 when it is `own`: the domain part of the
   * address the verdict is filed under.
   */
  private tailOf(v: Verdict, code: string, own = ownDomainTold(v.details, v.email)): string {
    const d = v.details;
    const c = v.confidence;
    const last = this.last;
    // Shared tails only for a domain that is the address's own (or not told), without a suggestion.
    const shared = d.suggestion === undefined && (d.domain === undefined || own);
    const domain = d.domain === undefined ? 0 : 1;
    const mailbox = mailboxCode(d);
    if (
      shared && last && last.code === code && last.confidence === c && last.provider === v.provider &&
      last.domain === domain && last.mailbox === mailbox
    ) {
      return last.tail;
    }
    let tail = '"' + code + '",' + (c !== undefined && Number.isFinite(c) ? String(c) : 'null') + ',' + JSON.stringify(v.provider) + ',';
    tail += d.domain === undefined ? 'null' : own ? '1' : JSON.stringify(d.domain);
    if (d.suggestion !== undefined) tail += ',' + JSON.stringify(d.suggestion);
    else if (mailbox !== undefined) tail += ',null';
    if (mailbox !== undefined) tail += ',"' + mailbox + '"';
    tail += ']';
    if (shared) this.last = { code, confidence: c, provider: v.provider, domain, mailbox, tail, end: '",' + tail + '\n' };
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

  /**
   * JSON.stringify(encodeVerdict(v)) (with `prefix` as a leading field), built
   * directly: this runs for every verdict of a run, and skipping the array and
   * the generic serialiser keeps the journal's cost low.
   */
  line(v: Verdict, prefix?: number): string {
    const head = prefix === undefined ? '[' : `[${prefix},`;
    return head + quote(v.email) + ',' + this.tailOf(v, codeOf(v));
  }

  /**
   * The NDJSON lines for the verdicts worth keeping. A row with `error` got no
   * verdict: recording it would stop a re-run from retrying the address.
   */
  lines(verdicts: readonly Verdict[], prefix?: number): string {
    // Few pieces per line: every concatenation leaves a short-lived string for the
    // garbage collector, and a million lines make that count.
    const open = prefix === undefined ? '["' : `[${prefix},"`;
    let text = '';
    for (const v of verdicts) {
      if (v.error) continue;
      text += PLAIN.test(v.email) ? open + v.email + this.lineEnd(v) : this.line(v, prefix) + '\n';
    }
    return text;
  }

  /** What follows a plain address up to the end of its line: `",` + tail + newline. */
  private lineEnd(v: Verdict): string {
    const tail = this.tailOf(v, codeOf(v));
    const last = this.last;
    return last !== undefined && last.tail === tail ? last.end : '",' + tail + '\n';
  }
}

/** The verdict tells a domain, and it is the domain part of `address`. */
function ownDomainTold(d: Details, address: string): boolean {
  return d.domain !== undefined && isDomainOf(d.domain, address);
}

/** The inverse of encodeVerdict, or undefined when `a` is not one (a damaged line). */
export function decodeVerdict(a: unknown): Verdict | undefined {
  if (!Array.isArray(a) || a.length < 5 || a.length > 7) return undefined;
  const [email, code, confidence, provider, domain, suggestionOrNull, mailbox] = a as unknown[];
  const suggestion = a.length === 7 && suggestionOrNull === null ? undefined : suggestionOrNull;
  if (mailbox !== undefined && (typeof mailbox !== 'string' || !MAILBOX_FIELD.test(mailbox))) return undefined;
  if (typeof email !== 'string' || typeof code !== 'string' || code.length !== 7) return undefined;
  const status = CODE_STATUS[code[0]!];
  if (!status) return undefined;
  // 1e999 parses as Infinity: a number out of range is damage, not a verdict
  if (confidence !== null && (typeof confidence !== 'number' || !(confidence >= 0 && confidence <= 1))) return undefined;
  if (typeof provider !== 'string') return undefined;
  if (domain !== null && domain !== 1 && typeof domain !== 'string') return undefined;
  if (suggestion !== undefined && typeof suggestion !== 'string') return undefined;
  // Keys are set in one fixed order, only when told, so that a verdict read back
  // serialises exactly like the one the engine gave (byte-identical re-runs).
  const details: Details = {};
  const syntax = untri(code[2]);
  if (syntax !== undefined) details.syntax = syntax;
  if (domain !== null) details.domain = domain === 1 ? ownDomain(email) : domain;
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
  return {
    email,
    isValid: untri(code[1]),
    status,
    confidence: confidence ?? undefined,
    provider,
    details,
  };
}

/**
 * The in-memory side of a store: an index holds `address → tail`, where the
 * tail is the rest of the line after the address (`"v11100-",0.95,"p",1]`).
 * A big list has few distinct tails, so they are pooled: one string, checked
 * once and decoded once, shared by every address with that verdict — a
 * million-entry index costs little more than its keys, and loads and answers
 * without parsing a million lines twice.
 */
export class TailPool {
  private readonly pool = new Map<string, { tail: string; template: Verdict; own: boolean }>();

  constructor(private readonly max = 65_536) {}

  /**
   * The pooled tail of a stored line whose parsed entry is `entry` (`skip`
   * fields precede the address: the cache's timestamp), or undefined when the
   * line holds no valid verdict.
   */
  tailOf(line: string, entry: unknown[], skip: number): string | undefined {
    const email = entry[skip];
    if (typeof email !== 'string') return undefined;
    let head = '[';
    for (let i = 0; i <= skip; i++) head += JSON.stringify(entry[i]) + ',';
    // A line we wrote starts exactly so; anything else is re-encoded.
    const tail = line.startsWith(head) ? line.slice(head.length) : JSON.stringify(entry.slice(skip + 1)).slice(1);
    const had = this.pool.get(tail);
    if (had) return had.tail;
    const template = decodeVerdict(['', ...entry.slice(skip + 1)]);
    if (!template) return undefined;
    // A slice of the line would keep the whole line alive: keep a flat copy.
    const flat = Buffer.from(tail, 'utf8').toString('utf8');
    if (this.pool.size < this.max) this.pool.set(flat, { tail: flat, template, own: entry[skip + 4] === 1 });
    return flat;
  }

  /** the address of the line `quick` last read */
  quickEmail = '';

  /**
   * The pooled tail of a journal line written as this program writes them,
   * `["address",tail`, read without parsing it: the address is plain (nothing
   * JSON would escape) and the tail is one already pooled, so the line is
   * exactly as valid as the one that pooled it. Undefined for any other line,
   * which the caller then parses. The address goes to `quickEmail`, a slice of
   * the line: whatever keeps it keeps the line (the journal's index keeps only
   * the rare verdict it cannot share, see VerdictMemo).
   */
  quick(line: string): string | undefined {
    if (line.charCodeAt(0) !== 0x5b || line.charCodeAt(1) !== 0x22) return undefined;
    const q = line.indexOf('"', 2);
    if (q < 0 || line.charCodeAt(q + 1) !== 0x2c) return undefined;
    const email = line.slice(2, q);
    if (ESCAPED.test(email)) return undefined;
    const hit = this.pool.get(line.slice(q + 2));
    if (hit === undefined) return undefined;
    this.quickEmail = email;
    return hit.tail;
  }

  /** The verdict for `email` from a tail returned by tailOf. */
  verdict(email: string, tail: string): Verdict {
    const hit = this.pool.get(tail);
    // Past the pool's cap a tail is not pooled: decode it on each ask.
    if (!hit) return decodeVerdict(JSON.parse('[' + JSON.stringify(email) + ',' + tail))!;
    const t = hit.template;
    // Fresh objects: a caller may adjust its copy without touching the pool.
    const details = hit.own ? { ...t.details, domain: ownDomain(email) } : { ...t.details };
    return { ...t, email, details };
  }
}
