import { readItemsByExample } from './json-by-example.js';

/**
 * A response body as JSON, or undefined when it is not JSON — exactly what
 * `JSON.parse(text)` gives, where the text is the body decoded as UTF-8 (a BOM
 * skipped, bad bytes replaced), as undici's `body.text()` decodes it.
 *
 * Why not that one call: a 1000-address bulk answer is about 210 kB of text,
 * and a string that size goes to V8's large-object space — a fresh mapping per
 * body, its pages faulted in and given back, and a scavenge every few bodies.
 * At 1M addresses that cost 2.2–2.7 s of CPU (half of it system time) to
 * decode and parse 1000 bodies, against 0.75–1.2 s for the same bodies parsed
 * as arrays of about 32 kB each (bench in the commit that brought this).
 *
 * So the `results` array (Shape A at the top, Shape B under `data`) is cut
 * into groups at `},{` between items and each group is parsed on its own;
 * the rest of the body is parsed with a marker in place of the items. That is
 * the same value as one parse, or nothing is taken from it:
 * - a group is parsed as `[` + its bytes + `]`; a cut inside a string or
 *   inside an item leaves that group unbalanced, so it fails to parse;
 * - the body with the items replaced by a marker string must parse, and hold
 *   the marker alone at `results` (or `data.results`): so the cut-out bytes
 *   were the whole contents of the array that the parse keeps under that key.
 * Anything else (another layout, white space between items, a failed group)
 * falls back to one parse of the whole text.
 */
export function parseJsonBody(bytes: Uint8Array): unknown {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const start = hasBom(buf) ? 3 : 0;
  if (buf.length - start >= SMALL) {
    const value = parseInGroups(buf, start);
    if (value !== undefined) return value;
  }
  return parseText(buf.toString('utf8', start, buf.length));
}

/** bytes of text per group, about: well under V8's large-object threshold (128 kB) */
const GROUP = 32 * 1024;
/** a body shorter than this is parsed whole: a few items, nothing to gain */
const SMALL = 4 * 1024;
const ARRAY_KEY = Buffer.from('"results":[');
const BETWEEN_ITEMS = Buffer.from('},{');
const LAST_ITEM = Buffer.from('}]');
/** unforgeable by a server: it cannot know this run's marker */
const MARKER = `results-marker-${Math.random().toString(36).slice(2)}`;

function parseInGroups(buf: Buffer, start: number): unknown {
  const key = buf.indexOf(ARRAY_KEY, start);
  if (key < 0) return undefined;
  /** the first item's first byte */
  const first = key + ARRAY_KEY.length;
  /** the `}` that ends the last item: searched from the end, so it is never in the items */
  const end = buf.lastIndexOf(LAST_ITEM);
  if (end < first) return undefined;
  const items: unknown[] = [];
  // most items by example (json-by-example.ts), the rest in groups
  let from = readItemsByExample(buf, first, end, items);
  while (from <= end) {
    const cut = from + GROUP < end ? buf.indexOf(BETWEEN_ITEMS, from + GROUP) : -1;
    const to = cut < 0 || cut > end ? end : cut;
    const group = parseGroup(buf, from, to);
    if (group === undefined) return undefined;
    for (const item of group) items.push(item);
    from = to + 2;
  }
  const rest = parseText(buf.toString('utf8', start, first) + JSON.stringify(MARKER) + buf.toString('utf8', end + 1, buf.length));
  const holder = arrayHolder(rest);
  if (holder === undefined) return undefined;
  holder.results = items;
  return rest;
}

/** The items from `from` to the `}` at `to`, parsed as one array; the bytes around them are borrowed for the brackets. */
function parseGroup(buf: Buffer, from: number, to: number): unknown[] | undefined {
  const before = buf[from - 1]!;
  const after = buf[to + 1]!;
  buf[from - 1] = 0x5b; // [
  buf[to + 1] = 0x5d; // ]
  const value = parseText(buf.toString('utf8', from - 1, to + 2));
  buf[from - 1] = before;
  buf[to + 1] = after;
  return Array.isArray(value) ? value : undefined;
}

/** The object whose `results` is exactly [MARKER]: the body itself (Shape A) or its `data` (Shape B). */
function arrayHolder(body: unknown): Record<string, unknown> | undefined {
  const marked = (o: unknown): boolean => {
    const r = isObject(o) ? o.results : undefined;
    return Array.isArray(r) && r.length === 1 && r[0] === MARKER;
  };
  if (!isObject(body)) return undefined;
  if (marked(body)) return body;
  return marked(body.data) ? (body.data as Record<string, unknown>) : undefined;
}

function hasBom(buf: Buffer): boolean {
  return buf.length > 2 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf;
}

/** JSON.parse, or undefined for text that is not JSON. */
export function parseText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
