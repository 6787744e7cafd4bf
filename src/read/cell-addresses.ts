/**
 * The addresses a cell holds, as people paste them: a bare address; a
 * name-addr (`Jane Doe <jane@x.com>`, `"Doe, Jane" <jane@x.com>`, RFC 5322
 * §3.4); a `mailto:` URI (`mailto:jane@x.com?subject=Hi`, percent-encoded,
 * RFC 6068); or a list of these (Google Contacts' `a@x.com ::: b@y.com`,
 * `a@x.com; b@y.com`, `a@x.com, b@y.com`). The cell itself is never changed:
 * this only says which addresses to check.
 *
 * A list is taken as one only where it is clearly a list: split at `:::`,
 * `;` and `,` outside quotes and angle brackets, every part must hold an
 * address. Otherwise (`Doe, Jane <jane@x.com>`, a note with a comma) the
 * cell is one address, or one malformed cell that the checks reject.
 */

import type { InputRow } from './input-row.js';

/**
 * One address (the common case: a string, so a row costs no array), or
 * several. '' for an empty cell. A cell that holds no address it can tell
 * comes back trimmed, as it is, for the checks to reject.
 */
export function addressesIn(cell: string): string | string[] {
  const s = cell.trim();
  // Fast path: no character that a list, a name-addr or a URI needs (nearly
  // every cell of an address column).
  if (plain(s)) return s;
  if (!MAILTO.test(s)) {
    const parts = splitList(s);
    if (parts !== undefined) {
      const list = listOf(parts);
      if (list !== undefined) return list.length === 1 ? list[0]! : list;
    }
  }
  const one = addressOf(s);
  if (one === undefined) return s;
  return one.length === 1 ? one[0]! : one;
}

/** The addresses of a cell as a list: [] for an empty cell. */
export function addressList(cell: string): string[] {
  const found = addressesIn(cell);
  return typeof found === 'string' ? (found === '' ? [] : [found]) : found;
}

/**
 * A row of a table (or a line of a text) with the addresses to check in
 * `columns`: the one address of a single checked cell as `email` (the
 * common case), or every checked cell's addresses as `cells`.
 */
export function rowOf(fields: string[], columns: readonly number[]): InputRow {
  if (columns.length === 1) {
    const found = addressesIn(fields[columns[0]!] ?? '');
    return typeof found === 'string' ? { fields, email: found } : { fields, email: found[0]!, cells: [found] };
  }
  const cells = columns.map((c) => addressList(fields[c] ?? ''));
  return { fields, email: cells.find((c) => c.length > 0)?.[0] ?? '', cells };
}

/**
 * Whether `a` has the shape of an address: something before and after an
 * `@`, no white space. `@handle` (a Twitter or Instagram column) is not one.
 * A shape, not a verdict: the engine judges the rest.
 */
export function addressLike(a: string): boolean {
  const at = a.lastIndexOf('@');
  return at > 0 && at < a.length - 1 && !/\s/.test(a);
}

/** Whether the cell holds at least one address-like thing (see addressLike). */
export function holdsAddress(cell: string): boolean {
  const found = addressesIn(cell);
  return typeof found === 'string' ? addressLike(found) : found.some(addressLike);
}

const MAILTO = /^mailto:/i;

/**
 * No `<`, `:`, `;` or `,`: nothing to take apart. Four native scans: a
 * charCodeAt loop over the same cells cost 3-6 times as much (400-700 ms
 * against 60-90 ms beyond the trim, per million addresses, in a
 * micro-benchmark on a loaded machine).
 */
function plain(s: string): boolean {
  return s.indexOf(',') < 0 && s.indexOf(':') < 0 && s.indexOf('<') < 0 && s.indexOf(';') < 0;
}

/** Each part's address(es), or undefined when a part holds none: then the cell is not a list. */
function listOf(parts: string[]): string[] | undefined {
  const out: string[] = [];
  for (const part of parts) {
    const p = part.trim();
    if (p === '') continue; // `a@x.com;` and `a ::: ` leave an empty part: no address, no harm
    const found = addressOf(p);
    if (found === undefined || !found.every(addressLike)) return undefined;
    out.push(...found);
  }
  return out.length > 0 ? out : undefined;
}

/**
 * The parts of `s` between list separators (`:::`, `;`, `,`) outside quoted
 * strings and angle brackets, or undefined when it has none.
 */
function splitList(s: string): string[] | undefined {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  let angle = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (quoted) {
      if (c === '\\') i++;
      else if (c === '"') quoted = false;
      continue;
    }
    if (c === '"') quoted = true;
    else if (c === '<') angle++;
    else if (c === '>') angle = Math.max(0, angle - 1);
    else if (angle === 0 && (c === ',' || c === ';')) {
      parts.push(s.slice(start, i));
      start = i + 1;
    } else if (angle === 0 && c === ':' && s.startsWith(':::', i)) {
      parts.push(s.slice(start, i));
      start = i + 3;
      i += 2;
    }
  }
  if (parts.length === 0) return undefined;
  parts.push(s.slice(start));
  return parts;
}

/**
 * The address(es) of one entry: a mailto: URI's (it may name several), a
 * name-addr's angle-addr, or the entry itself; undefined when it is a URI or
 * a name-addr that holds no address.
 */
function addressOf(p: string): string[] | undefined {
  if (MAILTO.test(p)) return mailto(p);
  if (p.endsWith('>')) {
    const lt = angleStart(p);
    if (lt < 0) return undefined;
    const inner = p.slice(lt + 1, -1).trim();
    // `Jane <mailto:jane@x.com>`: what a mail client pastes from a link
    if (MAILTO.test(inner)) return mailto(inner);
    return inner === '' || /[<>]/.test(inner) ? undefined : [inner];
  }
  return [p];
}

/** Where the angle-addr at the end of a name-addr opens: the last `<` outside a quoted display name. */
function angleStart(p: string): number {
  let quoted = false;
  let at = -1;
  for (let i = 0; i < p.length - 1; i++) {
    const c = p[i]!;
    if (quoted) {
      if (c === '\\') i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === '<') at = i;
  }
  return at;
}

/**
 * RFC 6068: `mailto:` to-addresses, comma-separated and percent-encoded,
 * then `?hfields`, of which `to=` may name more. Other fields (subject, cc,
 * body) are not the cell's address.
 */
function mailto(uri: string): string[] | undefined {
  const rest = uri.slice('mailto:'.length);
  const q = rest.indexOf('?');
  const found = addressesOfField(q < 0 ? rest : rest.slice(0, q));
  if (q >= 0) {
    for (const field of rest.slice(q + 1).split('&')) {
      const eq = field.indexOf('=');
      if (eq > 0 && decode(field.slice(0, eq)).toLowerCase() === 'to') found.push(...addressesOfField(field.slice(eq + 1)));
    }
  }
  return found.length > 0 ? found : undefined;
}

function addressesOfField(field: string): string[] {
  return field
    .split(',')
    .map((a) => decode(a).trim())
    .filter((a) => a !== '');
}

/** Percent-decoding; text that is not well-formed percent-encoding is left as it is. */
function decode(s: string): string {
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
