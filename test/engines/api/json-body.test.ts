import { describe, expect, it } from 'vitest';
import { parseJsonBody } from '../../../src/engines/api/json-body.js';
import { seeded } from '../../support/fault-server.js';

/** What the body means: one JSON.parse of its text, as undici's body.text() decodes it (BOM skipped). */
function reference(bytes: Buffer): unknown {
  const text = new TextDecoder().decode(bytes);
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const item = (i: number, extra: Record<string, unknown> = {}) => ({
  email: `user${i}@domain${i % 7}.example.com`,
  isValid: true,
  status: 'valid',
  confidence: 0.95,
  provider: 'bench',
  details: { syntax: true, domain: `domain${i % 7}.example.com`, mx: true, disposable: false, role: false },
  ...extra,
});
const items = (n: number, f = (i: number) => item(i)) => Array.from({ length: n }, (_, i) => f(i));
const shapeA = (results: unknown[]) => ({ success: true, results, summary: { total: results.length, valid: results.length, invalid: 0, risky: 0 } });

/** Each body must give exactly what one parse of the whole text gives, or nothing where that gives nothing. */
const cases: [string, string][] = [
  ['Shape A, 1000 items (parsed in groups)', JSON.stringify(shapeA(items(1000)))],
  ['Shape B, 1000 items', JSON.stringify({ success: true, data: { results: items(1000), summary: { total: 1000 } } })],
  ['a small body (one parse)', JSON.stringify(shapeA(items(3)))],
  ['items whose strings hold "},{" and "}]"', JSON.stringify(shapeA(items(1000, (i) => item(i, { provider: i % 50 ? 'p' : 'a},{"b}]' }))))],
  ['items holding arrays of objects', JSON.stringify(shapeA(items(1000, (i) => item(i, { notes: [{ a: i }, { b: [{}] }] }))))],
  ['non-ASCII text', JSON.stringify(shapeA(items(1000, (i) => item(i, { provider: `prövider ✓ ${i}` }))))],
  ['pretty-printed (white space between items)', JSON.stringify(shapeA(items(300)), null, 2)],
  ['white space before the commas between items', JSON.stringify(shapeA(items(1000))).replaceAll('},{"email"', '} ,{"email"')],
  ['a summary after the items holding "}]"', JSON.stringify({ success: true, results: items(1000), summary: { notes: [{ x: 1 }] } })],
  ['"results" twice: the later one counts', JSON.stringify(shapeA(items(1000))).replace(/}$/, ',"results":[]}')],
  ['"results" twice, the later one a copy', JSON.stringify(shapeA(items(1000))).replace(/}$/, `,"results":${JSON.stringify(items(2))}}`)],
  ['a key that ends in "results"', JSON.stringify({ success: true, 'x"results': items(1000), results: [] })],
  ['the items cut short (not JSON)', JSON.stringify(shapeA(items(1000))).slice(0, 150_000)],
  ['a broken item in the middle', JSON.stringify(shapeA(items(1000))).replace('"user500@', '"user500@"x')],
  ['trailing garbage', JSON.stringify(shapeA(items(1000))) + 'x'],
  ['empty results', JSON.stringify(shapeA([]))],
  ['not JSON at all', '<html>' + 'x'.repeat(100_000) + '</html>'],
];

describe('parseJsonBody: a bulk answer parsed in pieces means what one JSON.parse of it means', () => {
  it.each(cases)('%s', (_name, text) => {
    const bytes = Buffer.from(text);
    const copy = Buffer.from(bytes);
    expect(parseJsonBody(bytes)).toEqual(reference(bytes));
    // keys in the same order, objects of their own
    expect(JSON.stringify(parseJsonBody(bytes))).toBe(JSON.stringify(reference(bytes)));
    // the bytes borrowed for brackets are given back
    expect(bytes.equals(copy)).toBe(true);
  });

  it('skips a UTF-8 byte order mark, as undici does', () => {
    const text = JSON.stringify(shapeA(items(1000)));
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]);
    expect(parseJsonBody(bytes)).toEqual(JSON.parse(text));
  });

  it('replaces bytes that are not UTF-8, as decoding the text does', () => {
    const bytes = Buffer.from(JSON.stringify(shapeA(items(1000, (i) => item(i, { provider: 'pX' })))));
    bytes[bytes.indexOf('pX') + 1] = 0xff;
    expect(parseJsonBody(bytes)).toEqual(reference(bytes));
  });
});

/**
 * Bodies made to trip the reading of items by example (json-by-example.ts):
 * items alike but for their strings, with now and then an item of another
 * make — escapes, non-ASCII, bytes that are not UTF-8, control characters,
 * `},{` in a string, `__proto__`, a key twice, arrays, numbers spelt every
 * way, white space inside items. Whatever the reader does, the value is the
 * one JSON.parse gives, each object its own.
 */
describe('parseJsonBody: items read by example mean what one JSON.parse means', () => {
  const rand = seeded(2024);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  /** a string's JSON text, sometimes one that is not plain */
  const str = (plain: string): string =>
    plain !== 'x' && rand() < 0.9
      ? JSON.stringify(plain)
      : rand() < 0.01
        ? pick(['"tab\there"', '"\u0001"']) // not JSON: the body is not either
        : pick(['"a\\"b"', '"\\u00e9t\\u00e9"', '"é✓ 𝔞"', '"},{"', '"}]"', '"\\\\"', '""']);
  const value = (depth: number): string => {
    const r = rand();
    if (r < 0.4) return str(`s${Math.floor(rand() * 1000)}@d${Math.floor(rand() * 9)}.test`);
    if (r < 0.6) return pick(['true', 'false', 'null', '0.95', '-0', '1e5', '12', '0.1E-2']);
    if (r < 0.75 && depth < 3) return object(depth + 1);
    if (r < 0.8) return pick(['[]', '[1,"a"]', '[{"x":1},{"y":"z"}]']);
    return str('plain');
  };
  const key = (): string => pick(['"email"', '"status"', '"details"', '"domain"', '"__proto__"', '"x"', '"y"', '"ключ"']);
  const object = (depth: number): string => {
    const n = 2 + Math.floor(rand() * 5);
    const members: string[] = [];
    for (let i = 0; i < n; i++) members.push(`${key()}${pick([':', ':', ' : '])}${value(depth)}`);
    return `{${members.join(pick([',', ',', ', ']))}}`;
  };
  /** the items of a body: a few makes, each repeated with other strings */
  const body = (): Buffer => {
    const makes = Array.from({ length: 1 + Math.floor(rand() * 4) }, () => object(0));
    const items: string[] = [];
    for (let i = 0; i < 100 + Math.floor(rand() * 300); i++) {
      // the same make with other strings: each plain string value replaced by another, now and then one that is not plain
      items.push(
        pick(makes).replace(/:(\s*)"([a-z0-9@.]+)"/g, (_m, ws: string) => `:${ws}${rand() < 0.9 ? `"u${Math.floor(rand() * 1e6)}@e${i % 7}.test"` : str('x')}`),
      );
    }
    const text = `{"success":true,"results":[${items.join(',')}],"summary":{"total":${items.length}}}`;
    const bytes = Buffer.from(text);
    // now and then a byte that is not UTF-8, inside a string or not
    if (rand() < 0.2) bytes[Math.floor(rand() * bytes.length)] = pick([0xff, 0xc3, 0x80]);
    return bytes;
  };
  /** every object and array under `v`, each once */
  const containers = (v: unknown, into: unknown[] = []): unknown[] => {
    if (typeof v === 'object' && v !== null) {
      into.push(v);
      for (const x of Object.values(v)) containers(x, into);
    }
    return into;
  };

  it('300 seeded bodies', () => {
    let read = 0;
    for (let n = 0; n < 300; n++) {
      const bytes = body();
      const got = parseJsonBody(bytes);
      const want = reference(bytes);
      const label = bytes.toString('utf8', 0, 300);
      expect(JSON.stringify(got), label).toBe(JSON.stringify(want));
      expect(got, label).toEqual(want);
      if (got === undefined) continue;
      read++;
      const all = containers(got);
      expect(new Set(all).size, label).toBe(all.length);
      // an own property named __proto__, never the prototype
      for (const c of all) if (!Array.isArray(c)) expect(Object.getPrototypeOf(c)).toBe(Object.prototype);
    }
    expect(read).toBeGreaterThan(100);
  });
});
