import { describe, expect, it } from 'vitest';
import { Claim, VerdictMemo } from '../../src/dedupe/verdict-memo.js';
import type { Verdict } from '../../src/verdict.js';

const verdict = (email: string, status: Verdict['status']): Verdict => ({
  email, status, isValid: status === 'valid', confidence: 0.9, provider: 'p',
  details: { syntax: true, domain: email.slice(email.lastIndexOf('@') + 1).toLowerCase() },
});

/** Keys kept as a local part and a domain id must still be told apart exactly. */
const tricky = [
  'ann@x.io', 'ann@y.io', 'ann@x.i', 'ann@xx.io', 'an@nx.io', 'ann@', 'ann', '@x.io', '', 'a@b@x.io', 'a@b', 'a',
  'é@x.io', 'e@x.io', 'ann@ĳ.io', 'ann@ij.io', '\ud800@x.io', '\udc00@x.io', 'ann@\ud800', 'ann@\udc00',
];

describe('the memo keeps domains apart from local parts', () => {
  for (const [name, hash] of [['the real hash', undefined], ['a hash where every key collides', () => 7]] as const) {
    it(`tells every key apart (${name}), before and after a chunk of keys is joined`, () => {
      const memo = new VerdictMemo(hash);
      const fill = Array.from({ length: 5000 }, (_, i) => `u${i}@d${i % 7}.io`);
      const keys = [...tricky, ...fill, ...tricky.map((k) => `z${k}`)];
      const tickets = keys.map((k) => memo.claim(k));
      expect(new Set(tickets).size).toBe(keys.length);
      keys.forEach((k, i) => memo.fulfil(tickets[i]!, k, verdict(k, i % 2 ? 'invalid' : 'valid')));
      keys.forEach((k, i) => {
        expect(memo.claim(k)).toBe(tickets[i]);
        expect(memo.claimed).toBe(Claim.Done);
        expect(memo.verdictAt(memo.find(k), k, k).status).toBe(i % 2 ? 'invalid' : 'valid');
      });
      for (const k of ['ann@z.io', 'ann@x.iO', 'a@b@x.i', 'zz', 'u5000@d0.io', 'u1@d0.io']) expect(memo.find(k)).toBe(-1);
    });
  }

  it('keeps keys exact past the number of domains it gives ids to', () => {
    const memo = new VerdictMemo();
    const keys = Array.from({ length: 70_000 }, (_, i) => `u@d${i}.io`);
    const tickets = keys.map((k) => memo.claim(k));
    expect(new Set(tickets).size).toBe(keys.length);
    keys.forEach((k, i) => memo.fulfil(tickets[i]!, k, verdict(k, i % 3 ? 'valid' : 'risky')));
    for (const i of [0, 65_534, 65_535, 65_536, 69_999]) {
      expect(memo.claim(keys[i]!)).toBe(tickets[i]);
      expect(memo.verdictAt(memo.find(keys[i]!), keys[i]!, keys[i]!)).toMatchObject({ status: i % 3 ? 'valid' : 'risky', details: { domain: `d${i}.io` } });
    }
    expect(memo.find('u@d70000.io')).toBe(-1);
    expect(memo.find('v@d69999.io')).toBe(-1);
  });
});
