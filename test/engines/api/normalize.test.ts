import { describe, expect, it } from 'vitest';
import { API_TEXT_CAPS, capText, cleanText } from '../../../src/engines/api/api-text.js';
import { matchResults, normalizeBulk } from '../../../src/engines/api/normalize.js';
import type { Verdict } from '../../../src/verdict.js';

describe('response normalisation', () => {
  it.each<[string, unknown, Partial<Verdict>[]]>([
    [
      'Shape A keeps status and details',
      {
        success: true,
        results: [
          {
            email: 'a@x.com',
            isValid: true,
            status: 'risky',
            confidence: 0.6,
            provider: 'p',
            details: { syntax: true, domain: 'x.com', mx: true, disposable: false, role: true },
          },
        ],
      },
      [
        {
          email: 'a@x.com',
          isValid: true,
          status: 'risky',
          confidence: 0.6,
          provider: 'p',
          details: { syntax: true, domain: 'x.com', mx: true, disposable: false, role: true },
        },
      ],
    ],
    [
      'Shape B derives status from isValid and invents no details',
      {
        success: true,
        data: {
          results: [
            { email: 'a@x.com', isValid: false, confidence: 0.9 },
            { email: 'b@x.com', isValid: true, confidence: 0.8 },
          ],
        },
      },
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
    [
      'a result carrying the error object (serve: not determined, for a temporary reason) is a row without a verdict, its details kept',
      {
        results: [
          {
            email: 'a@x.com',
            isValid: true,
            status: 'risky',
            confidence: 0.9,
            provider: 'mailsift-local',
            details: { syntax: true, role: true },
            error: { code: 'UNDETERMINED', message: "not determined: this server's DNS is unusable", details: 'dns_error' },
          },
        ],
      },
      [
        {
          email: 'a@x.com',
          isValid: undefined,
          status: 'unknown',
          details: { syntax: true, role: true },
          error: { code: 'UNDETERMINED', message: "not determined: this server's DNS is unusable (dns_error)" },
        },
      ],
    ],
    [
      'Shape B too; a code that would write on the terminal is cleaned',
      { data: { results: [{ email: 'a@x.com', isValid: true, confidence: 0.9, error: { code: 'UNDET\u001b[31mERMINED' } }] } },
      [{ status: 'unknown', error: { code: 'UNDET [31mERMINED', message: 'the server did not determine this address' } }],
    ],
    [
      'an error that is no error object is ignored',
      { results: [{ email: 'a@x.com', isValid: true, status: 'valid', confidence: 1, provider: 'p', details: {}, error: 'x' }] },
      [{ status: 'valid' }],
    ],
  ])('%s', (_name, body, expected) => {
    const got = normalizeBulk(body)!;
    expect(got).toHaveLength(expected.length);
    expected.forEach((e, i) => expect(got[i]).toMatchObject(e));
  });

  // issue 29.12: text from the API is capped where it enters (docs/output.md lists the caps)
  it('caps every string taken from a response: a 10 MB provider, domain or suggestion', () => {
    const huge = 'p'.repeat(10_000_000);
    const item = {
      email: 'a@x.com',
      isValid: true,
      status: 'risky',
      confidence: 0.6,
      provider: huge,
      details: { syntax: true, domain: huge, suggestion: huge },
    };
    const [a] = normalizeBulk({ results: [item] })!;
    expect([a!.provider.length, a!.details.domain!.length, a!.details.suggestion!.length]).toEqual([
      API_TEXT_CAPS.provider,
      API_TEXT_CAPS.domain,
      API_TEXT_CAPS.suggestion,
    ]);
    // a well-formed item with only a long domain leaves the fast path too
    const [b] = normalizeBulk({ results: [{ ...item, provider: 'p', details: { domain: huge } }] })!;
    expect(b!.details.domain).toHaveLength(API_TEXT_CAPS.domain);
    const [c] = normalizeBulk({ data: { results: [{ email: 'a@x.com', isValid: true, provider: huge }] } })!;
    expect(c!.provider).toHaveLength(API_TEXT_CAPS.provider);
  });

  it('never cuts a character in half', () => {
    expect(capText(`${'a'.repeat(99)}😀`, 100)).toBe('a'.repeat(99));
    expect(cleanText('RATE\u001b]0;pwned\u0007\nLIMITED\u202e\u0085', 64)).toBe('RATE ]0;pwned  LIMITED  ');
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

  it('matches an answer in the order asked, echoed lower-cased, where it stands: one spelling lower-cased is never another address', () => {
    const v = (email: string, status: Verdict['status']): Verdict => ({ email, status, isValid: undefined, confidence: undefined, provider: '', details: {} });
    // KELVIN SIGN lower-cased is k: by spelling, the first answer would go to a@kelvin.com
    const { matched, missing } = matchResults(['a@\u212aelvin.com', 'a@kelvin.com'], [v('a@kelvin.com', 'invalid'), v('a@kelvin.com', 'valid')]);
    expect(matched.map((m) => `${m.email}:${m.status}`)).toEqual(['a@\u212aelvin.com:invalid', 'a@kelvin.com:valid']);
    expect(missing).toEqual([]);
  });
});
