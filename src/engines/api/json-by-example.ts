/**
 * The items of a bulk answer read by example: a server writes every item of
 * its `results` the same way, and most items differ from one seen before only
 * in their strings (the address, the domain). So an item is parsed once with
 * JSON.parse and kept as a template — its bytes with each string value cut
 * out, and the value itself —; a later item whose bytes are the template's
 * with other strings in those places is that value with those strings, built
 * without parsing (a copy of the template's objects, the strings set).
 *
 * It is the same value as JSON.parse gives, by construction: the bytes around
 * the strings are compared exactly, and a string whose bytes hold no quote, no
 * backslash and no control character is its bytes decoded, in a token that
 * ends where the template's did — so the item parses to the same tree, with
 * those strings. An item that matches no template is parsed by JSON.parse
 * (and becomes a template); anything the reader is unsure of is left to the
 * caller, which parses the rest as before (json-body.ts).
 *
 * Why: JSON.parse of the answers was the largest part of a run against a fast
 * API. The 1M items of `npm run bench throughput`'s answers: 0.40-0.45 s read
 * by example against 0.61-0.63 s parsed in groups, and no 32 kB string per
 * group for the garbage collector; the whole run in-process (reader,
 * pipeline, writer) 2.38-2.61 s of CPU against 2.47-2.78 s, six rounds each,
 * alternating (figures in the commit that brought this).
 */

/** An item as JSON.parse gave it, cut into what is compared and what is read. */
interface Template {
  /** the item's bytes around its string values: fixed[0], a string's contents, fixed[1], … */
  fixed: Buffer[];
  /** the same bytes as 32-bit words, compared four bytes at a time */
  words: DataView[];
  /** the item's objects, in the order their `{` comes: [0] the item, each other with its parent and key */
  objects: { parent: number; key: string }[];
  /** each string value's place: the object it is in, and its key */
  strings: { object: number; key: string }[];
  /** the item as parsed, never handed out (its objects are copied) */
  value: Record<string, unknown>;
  /** by string: the last short one read there (a status, a provider), given again for the same bytes */
  recent: ({ bytes: Buffer; text: string } | undefined)[];
}

/** Strings up to this many bytes are remembered by their place (see Template.recent); an address is longer. */
const SHORT = 16;

/** Templates kept (most recent first): a run's answers come in a handful of kinds. */
const MAX_TEMPLATES = 8;
/** A body whose items needed more new templates than this is left to the caller from there. */
const MAX_NEW_PER_BODY = 16;
const templates: Template[] = [];

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const BETWEEN_ITEMS = Buffer.from('},{');

/**
 * Reads items of an array from `from` (the first byte of an item) while it
 * can, up to `end` (the `}` that ends the last item), pushing each onto
 * `items`. Returns where it stopped: `end + 1` when every item was read, else
 * the first byte of the next item, for the caller to parse the rest.
 */
export function readItemsByExample(buf: Buffer, from: number, end: number, items: unknown[]): number {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.length);
  const strings: string[] = [];
  let made = 0;
  let at = from;
  for (;;) {
    let next = -1;
    for (let t = 0; t < templates.length; t++) {
      const template = templates[t]!;
      next = match(template, buf, view, at, end + 1, strings);
      if (next >= 0) {
        items.push(build(template, strings));
        if (t > 0) templates.unshift(...templates.splice(t, 1));
        break;
      }
    }
    if (next < 0) {
      if (++made > MAX_NEW_PER_BODY) return at;
      next = parseOne(buf, at, end, items);
      if (next < 0) return at;
    }
    if (next === end + 1) return next;
    if (buf[next] !== COMMA) {
      // not followed by another item: the caller parses it, with what follows
      items.pop();
      return at;
    }
    at = next + 1;
  }
}

/**
 * The item at `at` through JSON.parse: its extent is up to the next `},{`
 * (or `end`), which is the item exactly when that text parses (a `},{`
 * inside a string or a nested array leaves a prefix that does not). Pushes
 * it, keeps it as a template, and returns the byte after it; -1 when unsure.
 */
function parseOne(buf: Buffer, at: number, end: number, items: unknown[]): number {
  const cut = buf.indexOf(BETWEEN_ITEMS, at);
  const last = cut < 0 || cut > end ? end : cut;
  let value: unknown;
  try {
    value = JSON.parse(buf.toString('utf8', at, last + 1));
  } catch {
    return -1;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return -1;
  items.push(value);
  const template = templateOf(buf, at, last + 1);
  if (template) {
    templates.unshift(template);
    if (templates.length > MAX_TEMPLATES) templates.pop();
  }
  return last + 1;
}

/** Where the item at `at` ends (the byte after its `}`) if it is `t` with other strings, its strings in `out`; else -1. */
function match(t: Template, buf: Buffer, view: DataView, at: number, limit: number, out: string[]): number {
  const { fixed, words } = t;
  for (let s = 0; ; s++) {
    const bytes = fixed[s]!;
    const n = bytes.length;
    if (at + n > limit || !same(view, at, words[s]!, bytes)) return -1;
    at += n;
    if (s === fixed.length - 1) return at;
    // a string's contents, up to its closing quote (the next fixed part's first byte)
    let j = at;
    let high = 0;
    for (;;) {
      if (j >= limit) return -1;
      const c = buf[j]!;
      if (c === QUOTE) break;
      if (c === BACKSLASH || c < 0x20) return -1;
      high |= c;
      j++;
    }
    const length = j - at;
    const recent = t.recent[s];
    if (recent !== undefined && recent.bytes.length === length && bytesAt(buf, at, recent.bytes)) out[s] = recent.text;
    else {
      // latin1Slice for ASCII: the decoding toString('utf8') would do, without its checks (undici's body.text() calls utf8Slice so)
      const own = buf as unknown as Sliceable;
      out[s] = high < 0x80 ? own.latin1Slice(at, j) : own.utf8Slice(at, j);
      if (length <= SHORT) t.recent[s] = { bytes: Buffer.from(buf.subarray(at, j)), text: out[s]! };
    }
    at = j;
  }
}

/** Buffer's own decoders, which toString calls after checking its arguments. */
interface Sliceable {
  latin1Slice(start: number, end: number): string;
  utf8Slice(start: number, end: number): string;
}

/** Whether `bytes` (a few) are at `at` in `buf`. */
function bytesAt(buf: Buffer, at: number, bytes: Buffer): boolean {
  for (let i = 0; i < bytes.length; i++) if (buf[at + i] !== bytes[i]) return false;
  return true;
}

/** Whether the `bytes.length` bytes at `at` are `bytes` (`words`: the same bytes). */
function same(view: DataView, at: number, words: DataView, bytes: Buffer): boolean {
  const n = bytes.length;
  let i = 0;
  for (; i + 4 <= n; i += 4) if (view.getInt32(at + i, true) !== words.getInt32(i, true)) return false;
  for (; i < n; i++) if (view.getUint8(at + i) !== bytes[i]) return false;
  return true;
}

/** A fresh copy of the template's value with `strings` in their places. */
function build(t: Template, strings: readonly string[]): Record<string, unknown> {
  const { objects } = t;
  const made: Record<string, unknown>[] = new Array<Record<string, unknown>>(objects.length);
  const item = { ...t.value };
  made[0] = item;
  for (let o = 1; o < objects.length; o++) {
    const { parent, key } = objects[o]!;
    const copy = { ...(made[parent]![key] as Record<string, unknown>) };
    made[parent]![key] = copy;
    made[o] = copy;
  }
  const places = t.strings;
  for (let s = 0; s < places.length; s++) made[places[s]!.object]![places[s]!.key] = strings[s];
  return item;
}

/**
 * The template of the item in bytes [from, to), which JSON.parse has read:
 * undefined for an item it cannot stand for — an array, a string with an
 * escape, a key twice in one object (the last value counts), a key
 * `__proto__` (kept out rather than reasoned about: setting it changes the
 * prototype unless an own property of that name is there) — which are then
 * always parsed.
 */
function templateOf(buf: Buffer, from: number, to: number): Template | undefined {
  const fixed: Buffer[] = [];
  const objects: Template['objects'] = [];
  const strings: Template['strings'] = [];
  /** the objects open at `i`, innermost last: their index and keys so far */
  const open: { index: number; keys: Set<string> }[] = [];
  let key: string | undefined;
  let cut = from;
  let i = from;
  while (i < to) {
    const c = buf[i]!;
    if (c === 0x7b) {
      // {
      if (open.length > 0 && key === undefined) return undefined;
      objects.push(open.length === 0 ? { parent: -1, key: '' } : { parent: open[open.length - 1]!.index, key: key! });
      open.push({ index: objects.length - 1, keys: new Set() });
      key = undefined;
      i++;
    } else if (c === 0x7d) {
      // }
      open.pop();
      i++;
    } else if (c === QUOTE) {
      let j = i + 1;
      while (j < to && buf[j] !== QUOTE) {
        if (buf[j] === BACKSLASH) return undefined;
        j++;
      }
      if (j >= to || open.length === 0) return undefined;
      const text = buf.toString('utf8', i + 1, j);
      const inner = open[open.length - 1]!;
      if (key === undefined) {
        // a key: its value follows
        if (text === '__proto__' || inner.keys.has(text)) return undefined;
        inner.keys.add(text);
        key = text;
      } else {
        // a string value: its contents are read, the rest compared
        fixed.push(Buffer.from(buf.subarray(cut, i + 1)));
        strings.push({ object: inner.index, key });
        cut = j;
        key = undefined;
      }
      i = j + 1;
    } else if (c === 0x5b) {
      return undefined; // [
    } else if (c === 0x2c) {
      // , : the next string is a key
      key = undefined;
      i++;
    } else {
      // white space, `:`, and numbers, true, false and null, which are compared as bytes
      i++;
    }
  }
  if (open.length !== 0 || objects.length === 0) return undefined;
  fixed.push(Buffer.from(buf.subarray(cut, to)));
  const value = JSON.parse(buf.toString('utf8', from, to)) as Record<string, unknown>;
  const words = fixed.map((b) => new DataView(b.buffer, b.byteOffset, b.length));
  return { fixed, words, objects, strings, value, recent: strings.map(() => undefined) };
}
