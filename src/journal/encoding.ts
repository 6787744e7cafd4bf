import type { Details, Status, Verdict } from '../verdict.js';

/*
 * One verdict per line, as a short JSON array so that any address (quotes,
 * commas, non-ASCII) round-trips through JSON's own escaping:
 *
 *   ["ann@example.com","v11100-",0.95,"mailgun",1]
 *    email             code       confidence provider domain [suggestion]
 *
 * code = status letter, then isValid, syntax, mx, disposable, role, free as
 * 1 / 0 / - (not told). domain is 1 when it equals the address's own domain
 * part (the common case, so a million-line journal stays small), null when not
 * told, else the string. An unknown confidence is null. `error` is never
 * encoded: rows without a verdict are not stored (a re-run must retry them).
 */
export type EncodedVerdict = [string, string, number | null, string, string | 1 | null, string?];

const STATUS_CODE: Record<Status, string> = { valid: 'v', invalid: 'i', risky: 'r', unknown: 'u' };
const CODE_STATUS: Record<string, Status> = { v: 'valid', i: 'invalid', r: 'risky', u: 'unknown' };
const FLAGS = ['syntax', 'mx', 'disposable', 'role', 'free'] as const;

function tri(b: boolean | undefined): string {
  return b === undefined ? '-' : b ? '1' : '0';
}

function untri(c: string | undefined): boolean | undefined {
  return c === '1' ? true : c === '0' ? false : undefined;
}

function ownDomain(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1);
}

export function encodeVerdict(v: Verdict): EncodedVerdict {
  const d = v.details;
  let code = STATUS_CODE[v.status] + tri(v.isValid);
  for (const f of FLAGS) code += tri(d[f]);
  const domain = d.domain === undefined ? null : d.domain === ownDomain(v.email) ? 1 : d.domain;
  const out: EncodedVerdict = [v.email, code, v.confidence ?? null, v.provider, domain];
  if (d.suggestion !== undefined) out.push(d.suggestion);
  return out;
}

/** The inverse of encodeVerdict, or undefined when `a` is not one (a damaged line). */
export function decodeVerdict(a: unknown): Verdict | undefined {
  if (!Array.isArray(a) || a.length < 5 || a.length > 6) return undefined;
  const [email, code, confidence, provider, domain, suggestion] = a as unknown[];
  if (typeof email !== 'string' || typeof code !== 'string' || code.length !== 7) return undefined;
  const status = CODE_STATUS[code[0]!];
  if (!status) return undefined;
  if (confidence !== null && typeof confidence !== 'number') return undefined;
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
 * Key for the in-memory indexes: the pipeline sends each address once per run
 * with the domain compared case-insensitively (PRODUCT.md §3); stores match the
 * same way so that a resumed run skips exactly what the first one sent.
 */
export function addressKey(email: string): string {
  const at = email.lastIndexOf('@');
  if (at < 0) return email;
  const domain = email.slice(at);
  const lower = domain.toLowerCase();
  // The usual already-lowercase address is its own key: no second string per entry.
  return lower === domain ? email : email.slice(0, at) + lower;
}

/**
 * Splits a stored line into the email and the rest of the entry (the "tail",
 * from the code on, without the opening bracket), so that an index can hold
 * `email → tail` and share one string among the many verdicts that only differ
 * by address. `entry` is the parsed line; `skip` leading fields come before the
 * email (the cache's timestamp).
 */
export function verdictTail(line: string, entry: unknown[], skip: number): string {
  const head = '[' + entry.slice(0, skip + 1).map((x) => JSON.stringify(x)).join(',') + ',';
  // A line we wrote starts exactly so; anything else is re-encoded.
  return line.startsWith(head) ? line.slice(head.length) : JSON.stringify(entry.slice(skip + 1)).slice(1);
}

/** The verdict of `email` from a tail kept by verdictTail. */
export function verdictFromTail(email: string, tail: string): Verdict {
  return decodeVerdict(JSON.parse('[' + JSON.stringify(email) + ',' + tail))!;
}

/**
 * Shares equal strings: most verdicts of a big list have the same tail
 * (`"v11100-",0.95,"provider",1]`), so a million-entry index costs little more
 * than its keys. Stops interning past `max` distinct values to stay bounded.
 */
export function interner(max = 65_536): (s: string) => string {
  const pool = new Map<string, string>();
  return (s) => {
    const had = pool.get(s);
    if (had !== undefined) return had;
    // A slice of the line would keep the whole line alive: store a flat copy.
    const flat = Buffer.from(s, 'utf8').toString('utf8');
    if (pool.size < max) pool.set(flat, flat);
    return flat;
  };
}
