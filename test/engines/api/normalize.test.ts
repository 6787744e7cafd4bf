import { describe, expect, it } from 'vitest';
import { matchResults, normalizeBulk } from '../../../src/engines/api/normalize.js';
import type { Verdict } from '../../../src/verdict.js';

describe('response normalisation', () => {
  it.each<[string, unknown, Partial<Verdict>[]]>([
    [
      'Shape A keeps status and details',
      { success: true, results: [{ email: 'a@x.com', isValid: true, status: 'risky', confidence: 0.6, provider: 'p', details: { syntax: true, domain: 'x.com', mx: true, disposable: false, role: true } }] },
      [{ email: 'a@x.com', isValid: true, status: 'risky', confidence: 0.6, provider: 'p', details: { syntax: true, domain: 'x.com', mx: true, disposable: false, role: true } }],
    ],
    [
      'Shape B derives status from isValid and invents no details',
      { success: true, data: { results: [{ email: 'a@x.com', isValid: false, confidence: 0.9 }, { email: 'b@x.com', isValid: true, confidence: 0.8 }] } },
      [
        { email: 'a@x.com', isValid: false, status: 'invalid', confidence: 0.9, provider: '', details: { disposable: undefined, role: undefined } },
        { email: 'b@x.com', isValid: true, status: 'valid', confidence: 0.8, provider: '', details: { disposable: undefined, role: undefined } },
      ],
    ],
    [
      'Shape B type "risky" refines the status',
      { data: { results: [{ email: 'a@x.com', isValid: true, confidence: 0.5, type: 'risky' }] } },
      [{ email: 'a@x.com', status: 'risky' }],
    ],
    [
      'an item without email is dropped (then reported missing)',
      { results: [{ isValid: true }, { email: 'b@x.com', status: 'valid', isValid: true }] },
      [{ email: 'b@x.com', status: 'valid' }],
    ],
    ['a status outside the four becomes unknown-by-isValid', { results: [{ email: 'a@x.com', status: 'weird', isValid: true }] }, [{ status: 'valid' }]],
  ])('%s', (_name, body, expected) => {
    const got = normalizeBulk(body)!;
    expect(got).toHaveLength(expected.length);
    expected.forEach((e, i) => expect(got[i]).toMatchObject(e));
  });

  it.each([[null], [[]], [{ success: true }], [{ data: {} }], ['text']])('not a bulk body: %j', (body) => {
    expect(normalizeBulk(body)).toBeUndefined();
  });

  it('matches by address, exact first, then case-insensitively, never by position', () => {
    const v = (email: string, status: Verdict['status']): Verdict => ({ email, status, isValid: undefined, confidence: undefined, provider: '', details: {} });
    const { matched, missing } = matchResults(
      ['A@x.com', 'a@x.com', 'B@X.com', 'c@x.com'],
      [v('b@x.com', 'risky'), v('a@x.com', 'valid'), v('a@x.com', 'invalid')],
    );
    expect(matched.map((m) => `${m.email}:${m.status}`).sort()).toEqual(['A@x.com:invalid', 'B@X.com:risky', 'a@x.com:valid']);
    expect(missing).toEqual(['c@x.com']);
  });
});
