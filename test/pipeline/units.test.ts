import { describe, expect, it } from 'vitest';
import { addressKey } from '../../src/dedupe/address-key.js';
import { Claim, VerdictMemo } from '../../src/dedupe/verdict-memo.js';
import type { Verdict } from '../../src/verdict.js';

describe('dedupe memory', () => {
  const verdict = (email: string, status: Verdict['status'] = 'valid', suggestion?: string): Verdict => ({
    email, status, isValid: status === 'valid', confidence: 0.9, provider: 'p',
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
      memo.fulfil(memo.claim(addressKey(email)), addressKey(email), { ...verdict(email), details });
    });
    shapes.forEach((details, i) => {
      const email = `u${i}@example.com`;
      const ticket = memo.claim(addressKey(email));
      expect(memo.verdictAt(ticket, addressKey(email), email).details).toEqual(details);
    });
  });

  it('domain compares case-insensitively, the local part does not', () => {
    expect(addressKey('Ann@Example.COM')).toBe(addressKey('Ann@example.com'));
    expect(addressKey('ann@example.com')).not.toBe(addressKey('Ann@example.com'));
  });

  it('claims each address once, and gives back its verdict under the asking row’s spelling, through growth', () => {
    const memo = new VerdictMemo();
    const n = 1_200_000; // past the preallocated million: the table grows under pending claims
    const tickets: number[] = [];
    let fresh = 0;
    for (let i = 0; i < n; i++) {
      tickets.push(memo.claim(addressKey(`u${i}@D${i % 7}.com`)));
      if (memo.claimed === Claim.New) fresh++;
    }
    expect(fresh).toBe(n);
    expect(memo.claim(addressKey('u5@d5.com'))).toBe(tickets[5]);
    expect(memo.claimed).toBe(Claim.Pending);
    for (let i = 0; i < n; i++) {
      const email = `u${i}@D${i % 7}.com`;
      memo.fulfil(tickets[i]!, addressKey(email), verdict(email, i % 3 ? 'valid' : 'invalid'));
    }
    const x = memo.claim('x@gmial.com');
    memo.fulfil(x, 'x@gmial.com', verdict('x@gmial.com', 'risky', 'x@gmail.com'));
    for (let i = 0; i < n; i += 9973) {
      const email = `u${i}@d${i % 7}.COM`;
      const ticket = memo.claim(addressKey(email));
      expect(memo.claimed).toBe(Claim.Done);
      expect(memo.verdictAt(ticket, addressKey(email), email)).toMatchObject({
        email, status: i % 3 ? 'valid' : 'invalid', details: { domain: `d${i % 7}.com` },
      });
    }
    const again = memo.claim('x@gmial.com');
    expect(memo.verdictAt(again, 'x@gmial.com', 'x@gmial.com').details.suggestion).toBe('x@gmail.com');
    expect(memo.find(addressKey('nobody@d1.com'))).toBe(-1); // find adds nothing
    memo.claim(addressKey('nobody@d1.com'));
    expect(memo.claimed).toBe(Claim.New);
    expect(memo.find(addressKey('nobody@d1.com'))).toBe(-1); // pending is not answered
    expect(memo.find(addressKey('u9@d2.com'))).toBe(memo.claim(addressKey('u9@d2.com')));
    expect(memo.size).toBe(n + 2);
  });

  it('gives back a domain that ends the address but is not its last part exactly as answered', () => {
    const memo = new VerdictMemo();
    const email = 'x@b@c.io';
    const ticket = memo.claim(email);
    memo.fulfil(ticket, email, { ...verdict(email), details: { syntax: true, domain: 'b@c.io' } });
    expect(memo.verdictAt(ticket, email, email).details.domain).toBe('b@c.io');
  });

  it('keeps every verdict right when no two are alike (a confidence per address fills the shape table)', () => {
    const memo = new VerdictMemo();
    const n = 70_000; // past the 65,534 shapes a run can share
    const at = (i: number) => `u${i}@d.com`;
    const tickets = Array.from({ length: n }, (_, i) => memo.claim(at(i)));
    tickets.forEach((t, i) => memo.fulfil(t, at(i), { ...verdict(at(i)), confidence: i / n }));
    for (const i of [0, 1, 65_533, 65_534, 65_535, n - 1]) {
      expect(memo.verdictAt(memo.find(at(i)), at(i), at(i))).toMatchObject({ email: at(i), confidence: i / n, details: { domain: 'd.com' } });
    }
  });
});
