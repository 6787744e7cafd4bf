import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { addressKey } from '../../src/codec/address-key.js';
import { isPlainAddress, parseAddress } from '../../src/codec/syntax.js';
import { seeded } from '../support/fault-server.js';

const KELVIN = '\u212a';

/** Every address of the isemail corpus, valid or not, and spellings of them in other cases. */
function samples(): string[] {
  const xml = readFileSync(new URL('../fixtures/isemail-tests.xml', import.meta.url), 'utf8');
  const corpus = [...xml.matchAll(/<address>([\s\S]*?)<\/address>/g)].map((m) =>
    m[1]!
      .replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => String.fromCodePoint(parseInt(hex, 16)))
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&amp;/g, '&'),
  );
  const more = [
    'jane.doe@gmail.com',
    'Jane.Doe@gmail.com',
    'JANE.DOE@GMAIL.COM',
    'a@kelvin.com',
    `a@${KELVIN}elvin.com`,
    `${KELVIN}@kelvin.com`,
    'a@bücher.de',
    'a@BÜCHER.de',
    'a@xn--bcher-kva.de',
    'a@XN--BCHER-KVA.DE',
    'a@xn--kelvin-.com',
    '"Jane Doe"@x.de',
    '"jane doe"@x.de',
    'jörg@x.de',
    'JÖRG@x.de',
    'a@[IPv6:::1]',
    'a@[ipv6:::1]',
    'a@[127.0.0.1]',
    'a@-x.com',
    'a@x-.com',
    'a@ab--c.com',
    'a.@x.com',
    'a@x.com.',
    'x'.repeat(64) + '@x.com',
    'x'.repeat(65) + '@x.com',
    `a@${'b'.repeat(63)}.com`,
    `a@${'b'.repeat(64)}.com`,
  ];
  const random = seeded(38);
  const alphabet = ['a', 'B', '.', '@', '-', '"', ' ', 'x', 'n', 'Ü', KELVIN, '1', '[', ']', '\\', '+', 'ǅ'];
  for (let n = 0; n < 3000; n++) {
    let s = '';
    for (let k = 3 + Math.floor(random() * 12); k > 0; k--) s += alphabet[Math.floor(random() * alphabet.length)];
    more.push(s, s.replace('@', '@x'), `a${s}@b.com`);
  }
  return [...new Set([...corpus, ...more])];
}

describe('the address key', () => {
  it('gives one key to the case variants of an ASCII local part and to the spellings of one domain', () => {
    expect(new Set(['Jane.Doe@gmail.com', 'JANE.DOE@gmail.com', 'jane.doe@gmail.com', 'jane.doe@GMAIL.com'].map(addressKey))).toEqual(
      new Set(['jane.doe@gmail.com']),
    );
    expect(new Set(['a@bücher.de', 'a@BÜCHER.de', 'a@xn--bcher-kva.de', 'a@XN--bcher-KVA.de'].map(addressKey))).toEqual(new Set(['a@xn--bcher-kva.de']));
    expect(addressKey('"Jane Doe"@X.de')).toBe('"jane doe"@x.de');
    // letters outside ASCII keep their case
    expect(addressKey('JÖRG@x.de')).toBe('jÖrg@x.de');
    expect(addressKey('JÖRG@x.de')).not.toBe(addressKey('jörg@x.de'));
  });

  it('never gives an address IDNA2008 refuses the key of a valid one: KELVIN SIGN is not k', () => {
    expect(parseAddress(`a@${KELVIN}elvin.com`)).toBeUndefined();
    expect(addressKey(`a@${KELVIN}elvin.com`)).toBe(`a@${KELVIN}elvin.com`);
    expect(addressKey(`a@${KELVIN}elvin.com`)).not.toBe(addressKey('a@kelvin.com'));
    expect(addressKey(`${KELVIN}@kelvin.com`)).not.toBe(addressKey('k@kelvin.com'));
  });

  it('refuses KELVIN SIGN and its kind wherever they stand in a domain: never the key of the letter they stand for', () => {
    // beside another letter outside ASCII, lower casing and NFC made KELVIN SIGN a k: the key of a@kö.com
    for (const [spelling, valid] of [
      [`a@${KELVIN}ö.com`, 'a@kö.com'],
      ['a@\u2126mega.com', 'a@ωmega.com'],
      ['a@\u212bngström.se', 'a@ångström.se'],
      ['a@\uf900.jp', 'a@\u8c48.jp'],
    ]) {
      expect(parseAddress(spelling!), spelling).toBeUndefined();
      expect(addressKey(spelling!)).not.toBe(addressKey(valid!));
    }
  });

  const all = samples();

  it('keeps an address the syntax refuses as written, and a key of a valid one is valid itself: no invalid spelling shares a key with a valid address', () => {
    const keysOfValid = new Map<string, string>();
    for (const s of all) {
      if (parseAddress(s) === undefined) continue;
      const key = addressKey(s);
      expect(parseAddress(key), `key of ${JSON.stringify(s)}`).toBeDefined();
      expect(addressKey(key), `key of ${JSON.stringify(s)}`).toBe(key);
      keysOfValid.set(key, s);
    }
    for (const s of all) {
      if (parseAddress(s) !== undefined) continue;
      expect(addressKey(s)).toBe(s);
      expect(keysOfValid.has(s), `${JSON.stringify(s)} shares the key of ${JSON.stringify(keysOfValid.get(s))}`).toBe(false);
    }
  });

  it('takes the fast path only for an address parseAddress gives back as written', () => {
    let plain = 0;
    for (const s of all) {
      if (!isPlainAddress(s)) continue;
      plain++;
      const parsed = parseAddress(s);
      expect(parsed && `${parsed.local}@${parsed.domain}`, JSON.stringify(s)).toBe(s);
      expect(s).toBe(s.toLowerCase());
    }
    expect(plain).toBeGreaterThan(50);
  });

  it('takes the fast path exactly where the character loop it replaced did', () => {
    // lengths at the edges (local part 64/65, label 63/64, address 254/255), hyphens, dots and xn-- where they are refused
    const random = seeded(41);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const pieces = ['a', 'z', '0', '9', '-', '.', '..', '@', '+', '_', '~', '!', '{', 'B', 'Z', 'xn--', 'XN--', 'é', KELVIN, ' ', '"', '\n', '[', '\u0000'];
    const runs = (n: number, ch = 'a') => ch.repeat(n);
    const cases = [...all];
    for (let n = 0; n < 20000; n++) {
      let s = '';
      for (let k = 1 + Math.floor(random() * 10); k > 0; k--) s += random() < 0.7 ? pick(['a', 'b', '1', '-', '.']) : pick(pieces);
      const local = random() < 0.1 ? runs(63 + Math.floor(random() * 3)) : runs(1 + Math.floor(random() * 3), pick(['a', 'q.r', 'x-y']));
      const label = random() < 0.1 ? runs(62 + Math.floor(random() * 3), 'b') : pick(['b', 'xn--b', 'b-', '-b', 'b--c', 'bb']);
      const long = random() < 0.05 ? `.${runs(60, 'c')}`.repeat(3) + `.${runs(60 + Math.floor(random() * 20), 'd')}` : '';
      cases.push(s, `${local}@${s}`, `${s}@${label}.com`, `${local}@${label}${long}`, `${local}@${label}.${s}`, `${s}${local}@${label}${s}`);
    }
    let plain = 0;
    for (const s of cases) {
      const expected = plainByLoop(s);
      if (expected) plain++;
      expect(isPlainAddress(s), JSON.stringify(s)).toBe(expected);
    }
    expect(plain).toBeGreaterThan(2000);
  });
});

/** isPlainAddress as it was first written: one pass over the characters. */
function plainByLoop(email: string): boolean {
  const atext = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7a) || "!#$%&'*+-/=?^_`{|}~".includes(String.fromCharCode(c));
  const host = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7a) || c === 0x2d;
  const len = email.length;
  if (len < 3 || len > 254) return false;
  let prevDot = true;
  let i = 0;
  for (; i < len; i++) {
    const c = email.charCodeAt(i);
    if (c === 0x40) break;
    if (c === 0x2e) {
      if (prevDot) return false;
      prevDot = true;
    } else if (c < 0x80 && atext(c)) {
      prevDot = false;
    } else {
      return false;
    }
  }
  if (prevDot || i > 64 || i + 1 >= len) return false;
  let label = i + 1;
  for (let j = label; j <= len; j++) {
    const c = j === len ? 0x2e : email.charCodeAt(j);
    if (c === 0x2e) {
      const n = j - label;
      if (n === 0 || n > 63 || email.charCodeAt(label) === 0x2d || email.charCodeAt(j - 1) === 0x2d) return false;
      if (email.charCodeAt(label + 2) === 0x2d && email.charCodeAt(label + 3) === 0x2d && email.startsWith('xn', label)) return false;
      label = j + 1;
    } else if (c >= 0x80 || !host(c)) {
      return false;
    }
  }
  return true;
}
