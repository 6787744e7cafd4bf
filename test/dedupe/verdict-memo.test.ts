import { describe, expect, it } from 'vitest';
import { addressKey } from '../../src/codec/address-key.js';
import { VerdictMemo } from '../../src/dedupe/verdict-memo.js';
import type { Verdict } from '../../src/verdict.js';

const verdict = (email: string, status: Verdict['status']): Verdict => ({
  email,
  status,
  isValid: status === 'valid',
  confidence: 0.9,
  provider: 'p',
  details: { syntax: true, domain: email.slice(email.lastIndexOf('@') + 1).toLowerCase() },
});

/** Keys the arena's byte encoding must still tell apart exactly. */
const tricky = [
  'ann@x.io',
  'ann@y.io',
  'ann@x.i',
  'ann@xx.io',
  'an@nx.io',
  'ann@',
  'ann',
  '@x.io',
  '',
  'a@b@x.io',
  'a@b',
  'a',
  'é@x.io',
  'e@x.io',
  'ann@ĳ.io',
  'ann@ij.io',
  '\ud800@x.io',
  '\udc00@x.io',
  'ann@\ud800',
  'ann@\udc00',
  // code units around the one-byte / three-byte boundary of the encoding
  '\u00fe',
  '\u00ff',
  '\u0100',
  '\uff00',
  '\uffff',
  '\u00ff\u0000\u00ff',
  '\u00ff\u00ff',
  '\u00ff\u00ff\u00ff',
  '\u0000\u00ff',
  '\u00ff\u0000',
];

describe('the memo tells keys apart exactly', () => {
  // Every key collides: each lookup compares bytes with all before it (quadratic), so fewer keys
  // there; each comparison is still exact.
  for (const [name, hash, fillSize] of [
    ['the real hash', undefined, 5000],
    ['a hash where every key collides', () => 7, 1500],
  ] as const) {
    it(`tells every key apart (${name})`, () => {
      const memo = new VerdictMemo(hash);
      const fill = Array.from({ length: fillSize }, (_, i) => `u${i}@d${i % 7}.io`);
      const keys = [...tricky, ...fill, ...tricky.map((k) => `z${k}`)];
      const tickets = keys.map((k) => memo.claim(k).ticket);
      expect(new Set(tickets).size).toBe(keys.length);
      keys.forEach((k, i) => memo.fulfil(tickets[i]!, k, verdict(k, i % 2 ? 'invalid' : 'valid')));
      // one assertion over all of them: thousands of expect() calls cost seconds
      const wrong = keys.filter((k, i) => {
        const c = memo.claim(k);
        return c.kind !== 'done' || c.ticket !== tickets[i] || memo.verdictAt(memo.find(k), k, k).status !== (i % 2 ? 'invalid' : 'valid');
      });
      expect(wrong).toEqual([]);
      for (const k of ['ann@z.io', 'ann@x.iO', 'a@b@x.i', 'zz', `u${fillSize}@d0.io`, 'u1@d0.io']) expect(memo.find(k)).toBe(-1);
    });
  }

  it('keeps keys exact with many domains', () => {
    const memo = new VerdictMemo();
    const keys = Array.from({ length: 70_000 }, (_, i) => `u@d${i}.io`);
    const tickets = keys.map((k) => memo.claim(k).ticket);
    expect(new Set(tickets).size).toBe(keys.length);
    keys.forEach((k, i) => memo.fulfil(tickets[i]!, k, verdict(k, i % 3 ? 'valid' : 'risky')));
    for (const i of [0, 65_534, 65_535, 65_536, 69_999]) {
      expect(memo.claim(keys[i]!).ticket).toBe(tickets[i]);
      expect(memo.verdictAt(memo.find(keys[i]!), keys[i]!, keys[i]!)).toMatchObject({ status: i % 3 ? 'valid' : 'risky', details: { domain: `d${i}.io` } });
    }
    expect(memo.find('u@d70000.io')).toBe(-1);
    expect(memo.find('v@d69999.io')).toBe(-1);
  });

  it('keeps keys exact across the pages of its arena, and keys longer than a page', () => {
    const memo = new VerdictMemo();
    // 100,000 keys of 20 to 25 bytes: two pages and more
    const keys = Array.from({ length: 100_000 }, (_, i) => `user${i}.${i % 13}@d${i % 97}.io`);
    const long = ['a'.repeat(400_000) + '@x.io', 'a'.repeat(400_000) + '@x.ip', '\u4e00'.repeat(400_000) + '@x.io', '\u4e00'.repeat(399_999) + '\u4e01@x.io'];
    const all = [...keys.slice(0, 50_000), ...long, ...keys.slice(50_000), 'z@x.io'];
    const tickets = all.map((k) => memo.claim(k).ticket);
    expect(new Set(tickets).size).toBe(all.length);
    all.forEach((k, i) => memo.fulfil(tickets[i]!, k, verdict(k, i % 2 ? 'invalid' : 'valid')));
    // one assertion over all of them: a hundred thousand expect() calls cost seconds
    const wrong = all.filter((k, i) => {
      const c = memo.claim(k);
      return c.kind !== 'done' || c.ticket !== tickets[i];
    });
    expect(wrong).toEqual([]);
    expect(memo.find('a'.repeat(400_000) + '@x.iq')).toBe(-1);
    expect(memo.find('user100000.3@d90.io')).toBe(-1);
  });
});

describe('dedupe memory', () => {
  const verdict = (email: string, status: Verdict['status'] = 'valid', suggestion?: string): Verdict => ({
    email,
    status,
    isValid: status === 'valid',
    confidence: 0.9,
    provider: 'p',
    details: { syntax: true, domain: email.slice(email.lastIndexOf('@') + 1).toLowerCase(), suggestion },
  });

  it('gives a duplicate the smtp and catch_all of its first answer', () => {
    const memo = new VerdictMemo();
    const shapes: Verdict['details'][] = [
      { syntax: true, domain: 'example.com', smtp: true, catchAll: false },
      { syntax: true, domain: 'example.com', smtp: false, catchAll: false },
      { syntax: true, domain: 'example.com', smtp: true, catchAll: true },
      { syntax: true, domain: 'example.com' },
    ];
    shapes.forEach((details, i) => {
      const email = `u${i}@example.com`;
      memo.fulfil(memo.claim(addressKey(email)).ticket, addressKey(email), { ...verdict(email), details });
    });
    shapes.forEach((details, i) => {
      const email = `u${i}@example.com`;
      const { ticket } = memo.claim(addressKey(email));
      expect(memo.verdictAt(ticket, addressKey(email), email).details).toEqual(details);
    });
  });

  it('the key ignores the ASCII case of the domain and of the local part', () => {
    expect(addressKey('Ann@Example.COM')).toBe(addressKey('Ann@example.com'));
    expect(addressKey('ann@example.com')).toBe(addressKey('Ann@example.com'));
  });

  it('claims each address once, and gives back its verdict under the asking row’s spelling, through growth', () => {
    const memo = new VerdictMemo();
    const n = 1_100_000; // past the preallocated million: the table grows under pending claims
    // keys the table must find again after growing rehashes them from their bytes
    const wide = ['é@x.io', '\u4e00\u4e01@x.io', '\ud800@x', '\u00ff@x', 'ab\u0100', 'a'];
    const wideTickets = wide.map((k) => memo.claim(k).ticket);
    let fresh = 0;
    // keys as addressKey gives them (the domain in lower case): the rows below ask in other spellings
    for (let i = 0; i < n; i++) if (memo.claim(`u${i}@d${i % 7}.com`).kind === 'new') fresh++;
    expect(fresh).toBe(n);
    expect(memo.claim(addressKey('u5@d5.com'))).toEqual({ kind: 'pending', ticket: wide.length + 5 });
    for (let i = 0; i < n; i += 7919) {
      const email = `u${i}@D${i % 7}.com`;
      memo.fulfil(wide.length + i, addressKey(email), verdict(email, i % 3 ? 'valid' : 'invalid'));
    }
    const x = memo.claim('x@gmial.com').ticket;
    memo.fulfil(x, 'x@gmial.com', verdict('x@gmial.com', 'risky', 'x@gmail.com'));
    for (let i = 0; i < n; i += 7919) {
      const email = `u${i}@d${i % 7}.COM`;
      const { kind, ticket } = memo.claim(addressKey(email));
      expect(kind).toBe('done');
      expect(memo.verdictAt(ticket, addressKey(email), email)).toMatchObject({
        email,
        status: i % 3 ? 'valid' : 'invalid',
        details: { domain: `d${i % 7}.com` },
      });
    }
    const again = memo.claim('x@gmial.com').ticket;
    expect(memo.verdictAt(again, 'x@gmial.com', 'x@gmial.com').details.suggestion).toBe('x@gmail.com');
    expect(memo.find(addressKey('nobody@d1.com'))).toBe(-1); // find adds nothing
    expect(memo.claim(addressKey('nobody@d1.com')).kind).toBe('new');
    expect(memo.find(addressKey('nobody@d1.com'))).toBe(-1); // pending is not answered
    wide.forEach((k, i) => expect(memo.claim(k)).toEqual({ kind: 'pending', ticket: wideTickets[i] }));
    expect(memo.size).toBe(n + 2 + wide.length);
  });

  it('gives back a domain that ends the address but is not its last part exactly as answered', () => {
    const memo = new VerdictMemo();
    const email = 'x@b@c.io';
    const { ticket } = memo.claim(email);
    memo.fulfil(ticket, email, { ...verdict(email), details: { syntax: true, domain: 'b@c.io' } });
    expect(memo.verdictAt(ticket, email, email).details.domain).toBe('b@c.io');
  });

  it('keeps every verdict right when no two are alike (a confidence per address fills the shape table)', () => {
    const memo = new VerdictMemo();
    const n = 70_000; // past the 32,766 shapes a run can share
    const at = (i: number) => `u${i}@d.com`;
    const tickets = Array.from({ length: n }, (_, i) => memo.claim(at(i)).ticket);
    tickets.forEach((t, i) => memo.fulfil(t, at(i), { ...verdict(at(i)), confidence: i / n }));
    for (const i of [0, 1, 32_765, 32_766, 32_767, 65_533, 65_534, 65_535, n - 1]) {
      expect(memo.verdictAt(memo.find(at(i)), at(i), at(i))).toMatchObject({ email: at(i), confidence: i / n, details: { domain: 'd.com' } });
    }
  });
});
