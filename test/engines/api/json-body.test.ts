import { describe, expect, it } from 'vitest';
import { parseJsonBody } from '../../../src/engines/api/json-body.js';

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
  ['items whose strings hold "},{" and "}]"', JSON.stringify(shapeA(items(1000, (i) => item(i, { provider: i % 50 ? 'p' : 'a},{"b}]' })))) ],
  ['items holding arrays of objects', JSON.stringify(shapeA(items(1000, (i) => item(i, { notes: [{ a: i }, { b: [{}] }] }))))],
  ['non-ASCII text', JSON.stringify(shapeA(items(1000, (i) => item(i, { provider: `prövider ✓ ${i}` }))))],
  ['pretty-printed (white space between items)', JSON.stringify(shapeA(items(300)), null, 2)],
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
