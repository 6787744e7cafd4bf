import { STATUSES, type Details, type Status, type Verdict } from '../../verdict.js';
import { API_TEXT_CAPS, capText, cleanText } from './api-text.js';
import { addressKey } from '../../codec/address-key.js';

/**
 * Turns one bulk (or single) response body into verdicts. The spec documents two
 * shapes and does not say which a response uses, so each response is sniffed:
 * Shape A has `results` at the top, Shape B under `data`. Shape B carries no
 * status: it is derived from `isValid` (and refined by `data.type` when that
 * names a status), and details it does not give stay undefined — never invented.
 */
export function normalizeBulk(body: unknown): Verdict[] | undefined {
  if (!isObject(body)) return undefined;
  if (Array.isArray(body.results)) return verdictsOf(body.results, 'a');
  if (isObject(body.data) && Array.isArray(body.data.results)) return verdictsOf(body.data.results, 'b');
  return undefined;
}

/**
 * The verdicts of a bulk answer's items, those that are not verdicts left
 * out. Nearly every answer has none to leave out: filter() then only copied
 * the array, growing it as it went (27 MB of the 1.3 GB a run of the bench's
 * 1M addresses allocates). 1M items in bodies of 1000: 0.06-0.07 s of CPU
 * against 0.08 s (five rounds each, alternating).
 */
function verdictsOf(items: unknown[], shape: 'a' | 'b'): Verdict[] {
  const out = items.map((item) => normalizeItem(item, shape));
  return out.includes(undefined) ? out.filter(isVerdict) : (out as Verdict[]);
}

/** A single-validation body (`POST /api/validate`), either shape. */
export function normalizeSingle(body: unknown): Verdict | undefined {
  if (!isObject(body)) return undefined;
  if (isObject(body.data) && typeof body.data.email === 'string') return normalizeItem(body.data, 'b');
  if (typeof body.email === 'string') return normalizeItem(body, 'a');
  return undefined;
}

function normalizeItem(item: unknown, shape: 'a' | 'b'): Verdict | undefined {
  if (!isObject(item) || typeof item.email !== 'string') return undefined;
  if (shape === 'a' && isWellFormed(item)) return item as unknown as Verdict;
  const isValid = typeof item.isValid === 'boolean' ? item.isValid : undefined;
  const confidence = typeof item.confidence === 'number' && Number.isFinite(item.confidence) ? item.confidence : undefined;
  const provider = typeof item.provider === 'string' ? capText(item.provider, API_TEXT_CAPS.provider) : '';
  // Shape A, or a Shape B item that carries a status after all, has details; Shape B otherwise has
  // only the disposable/role flags, and perhaps a `type` that names a status.
  const full = shape === 'a' || isStatus(item.status);
  let status: Status = isStatus(item.status) ? item.status : statusFromValidity(isValid);
  if (!full) status = statusFromType(item.type) ?? status;
  const d = isObject(item.details) ? item.details : {};
  const error = errorOf(item.error);
  const details: Details = full
    ? {
        syntax: bool(d.syntax),
        domain: typeof d.domain === 'string' ? capText(d.domain, API_TEXT_CAPS.domain) : undefined,
        mx: bool(d.mx),
        disposable: bool(d.disposable ?? item.disposable),
        role: bool(d.role ?? item.role),
        free: bool(d.free),
        suggestion: typeof d.suggestion === 'string' && d.suggestion ? capText(d.suggestion, API_TEXT_CAPS.suggestion) : undefined,
        // the mailbox check, from a server that tells (mailsift serve --smtp)
        smtp: bool(d.smtp),
        catchAll: bool(d.catchAll),
      }
    : { disposable: bool(item.disposable), role: bool(item.role) };
  // a result the server says it did not determine (see errorOf): a row without a verdict, as our own would be
  if (error) return { email: item.email, isValid: undefined, status: 'unknown', confidence, provider, details, error };
  return { email: item.email, isValid: validityOf(status, isValid), status, confidence, provider, details };
}

/**
 * The spec's error object on a result, `{code, message, details}`: the server
 * did not determine that address (mailsift serve says so when its DNS is
 * unusable, a domain's DNS or a mail server did not answer, or greylisting
 * held: code UNDETERMINED, the reason in details). The row gets no verdict —
 * status unknown, that error — so it is counted among the rows without one
 * (exit 4) and never journaled or cached: a later run asks again.
 */
function errorOf(e: unknown): { code: string; message: string } | undefined {
  if (!isObject(e) || typeof e.code !== 'string' || e.code === '') return undefined;
  const message = typeof e.message === 'string' ? cleanText(e.message, API_TEXT_CAPS.message) : 'the server did not determine this address';
  const details = typeof e.details === 'string' && e.details !== '' ? ` (${cleanText(e.details, API_TEXT_CAPS.code)})` : '';
  return { code: cleanText(e.code, API_TEXT_CAPS.code), message: message + details };
}

const DETAIL_TYPES: Record<string, 'boolean' | 'string'> = {
  syntax: 'boolean',
  domain: 'string',
  mx: 'boolean',
  disposable: 'boolean',
  role: 'boolean',
  free: 'boolean',
  suggestion: 'string',
  smtp: 'boolean',
  catchAll: 'boolean',
};

/**
 * A Shape A item that is already exactly a verdict (the common case) is used as
 * it is: copying a million of them costs more than checking them.
 */
function isWellFormed(item: Record<string, unknown>): boolean {
  if (typeof item.isValid !== 'boolean' || !isStatus(item.status) || typeof item.provider !== 'string') return false;
  if (item.provider.length > API_TEXT_CAPS.provider) return false; // capped on the slow path
  if (item.status === 'unknown') return false; // its isValid is dropped (validityOf)
  if (typeof item.confidence !== 'number' || !Number.isFinite(item.confidence) || item.error !== undefined) return false;
  const d = item.details;
  if (!isObject(d)) return false;
  for (const key in d) {
    const type = DETAIL_TYPES[key];
    const v = d[key];
    if (type === undefined || typeof v !== type) return false;
    if (type === 'string' && (v as string).length > API_TEXT_CAPS.domain) return false; // domain or suggestion: capped on the slow path
  }
  return d.suggestion !== '';
}

/**
 * `is_valid` of an `unknown` verdict is empty on every path: the spec types
 * `isValid` as a boolean, so a server (ours included) answers `false` for
 * "no determination", and a user who deletes the rows where it is false would
 * delete addresses nobody has judged.
 */
function validityOf(status: Status, isValid: boolean | undefined): boolean | undefined {
  return status === 'unknown' ? undefined : isValid;
}

function statusFromValidity(isValid: boolean | undefined): Status {
  return isValid === undefined ? 'unknown' : isValid ? 'valid' : 'invalid';
}

/** Shape B's `data.type` has no documented values; only a plain status name refines. */
function statusFromType(type: unknown): Status | undefined {
  if (typeof type !== 'string') return undefined;
  const t = type.trim().toLowerCase();
  if (t === 'risky' || t === 'unknown') return t;
  return undefined;
}

function isStatus(v: unknown): v is Status {
  return typeof v === 'string' && (STATUSES as readonly string[]).includes(v);
}

const bool = (v: unknown): boolean | undefined => (typeof v === 'boolean' ? v : undefined);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isVerdict(v: Verdict | undefined): v is Verdict {
  return v !== undefined;
}

/** An address and its spellings in another case (any letters), or with the domain as its A-label, alike. */
const looseKey = (email: string): string => addressKey(email).toLowerCase();

/**
 * Matches the verdicts of a response to the addresses asked, by address — exact
 * first, then as the same address in another spelling (some servers echo
 * addresses lower-cased, or the domain as its A-label: compared by the address
 * key, lower-cased) — never by position alone: a response in the order asked
 * whose every address is its own in another spelling is matched where it
 * stands. Returns the verdicts re-addressed to the asked spelling and the
 * addresses the response left out.
 */
export function matchResults(asked: readonly string[], got: readonly Verdict[]): { matched: Verdict[]; missing: string[] } {
  // Most servers answer in the order asked: nothing to match then. Each verdict
  // takes the asked string itself (same text): later comparisons with it are
  // then a pointer check, and the copy from the response can be freed.
  if (got.length === asked.length) {
    let i = 0;
    while (i < asked.length && got[i]!.email === asked[i]) got[i]!.email = asked[i++]!;
    if (i === asked.length) return { matched: got.slice(), missing: [] };
    // In the order asked, each in another spelling of its own address (a server that echoes
    // addresses lower-cased): matched where they stand. By spelling, one address's echo could
    // take another's answer: a@ + KELVIN SIGN + elvin.com lower-cased is a@kelvin.com.
    let j = i;
    while (j < asked.length && looseKey(got[j]!.email) === looseKey(asked[j]!)) j++;
    if (j === asked.length) return { matched: got.map((v, k) => (k < i ? v : { ...v, email: asked[k]! })), missing: [] };
  }
  const exact = new Map<string, Verdict>();
  const extra: Verdict[] = []; // a second result for the same address
  for (const v of got) {
    if (exact.has(v.email)) extra.push(v);
    else exact.set(v.email, v);
  }
  const matched: Verdict[] = [];
  const unmatched: string[] = [];
  for (const email of asked) {
    const v = exact.get(email);
    if (v) {
      exact.delete(email);
      matched.push(v);
    } else unmatched.push(email);
  }
  if (unmatched.length === 0) return { matched, missing: unmatched };

  // Only now the case-insensitive pass, over what is left: most responses never need it.
  const loose = new Map<string, Verdict[]>();
  for (const v of [...exact.values(), ...extra]) {
    const k = looseKey(v.email);
    const list = loose.get(k);
    if (list) list.push(v);
    else loose.set(k, [v]);
  }
  const missing: string[] = [];
  for (const email of unmatched) {
    const v = loose.get(looseKey(email))?.shift();
    if (v) matched.push({ ...v, email });
    else missing.push(email);
  }
  return { matched, missing };
}
