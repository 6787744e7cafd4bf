import { describe, expect, it } from 'vitest';
import { addressKey } from '../../src/codec/address-key.js';
import { decodeVerdict, encodeVerdict, VerdictEncoder } from '../../src/codec/verdict-encoding.js';

const encoder = new VerdictEncoder();
const encodeLine = (v: Parameters<VerdictEncoder['line']>[0], prefix?: number): string => encoder.line(v, prefix);
const encodeLines = (vs: Parameters<VerdictEncoder['lines']>[0], prefix?: number): string => encoder.lines(vs, prefix);
import { errorVerdict } from '../../src/verdict.js';
import type { Verdict } from '../../src/verdict.js';

const full: Verdict = {
  email: 'Ann.O"Neil@Example.com',
  isValid: true,
  status: 'risky',
  confidence: 0.73,
  provider: 'mailgun',
  details: { syntax: true, domain: 'Example.com', mx: true, disposable: false, role: true, free: false, suggestion: 'x@example.com' },
};

describe('verdict line encoding', () => {
  it.each<[string, Verdict]>([
    ['every field told', full],
    ['Shape B: nothing but validity', { email: 'b@x.io', isValid: false, status: 'invalid', confidence: undefined, provider: '', details: {} }],
    ['domain other than the address part', { ...full, details: { domain: 'xn--bcher-kva.example' } }],
    ['domain ending the address but holding an @ of its own', { ...full, email: 'x@b@c.io', details: { domain: 'b@c.io' } }],
    ['address with an emoji and a tab', { ...full, email: 'a\t😀@x.io', details: { domain: 'x.io' } }],
    ['non-ASCII address', { ...full, email: 'jörg@bücher.de', details: { syntax: true, domain: 'xn--bcher-kva.de' } }],
    ['unknown without error', { ...full, status: 'unknown', isValid: undefined, confidence: 0 }],
    ['the mailbox check, with a suggestion', { ...full, details: { ...full.details, smtp: true, catchAll: false } }],
    ['the mailbox check, no suggestion', { ...full, email: 'a@example.com', details: { syntax: true, domain: 'example.com', smtp: false } }],
    ['catch-all only', { ...full, email: 'a@example.com', details: { syntax: true, domain: 'example.com', catchAll: true } }],
    // the causes behind a row's reason: a resumed run must give the same reason
    ['a null MX', { ...full, status: 'invalid', email: 'a@n.test', details: { syntax: true, domain: 'n.test', mx: false, dnsFailure: 'null-mx' } }],
    ['DNS unanswered', { ...full, status: 'unknown', isValid: undefined, email: 'a@s.test', details: { syntax: true, domain: 's.test', dnsFailure: 'unanswered' } }],
    ['a greylisted mailbox', { ...full, status: 'valid', email: 'a@example.com', details: { syntax: true, domain: 'example.com', mx: true, smtpFailure: 'greylisted' } }],
    ['our MAIL FROM refused, <> too', { ...full, status: 'unknown', isValid: undefined, email: 'a@example.com', details: { syntax: true, domain: 'example.com', mx: true, smtpFailure: 'sender-refused' } }],
    ['a non-ASCII local part, a server without SMTPUTF8', { ...full, status: 'unknown', isValid: undefined, email: 'josé@example.com', details: { syntax: true, domain: 'example.com', mx: true, smtpFailure: 'no-utf8' } }],
    ['a full mailbox on a catch-all domain', { ...full, email: 'a@example.com', details: { syntax: true, domain: 'example.com', smtp: false, catchAll: true, mailbox: 'full' } }],
    ['a disabled mailbox', { ...full, status: 'invalid', email: 'a@example.com', details: { syntax: true, domain: 'example.com', smtp: false, mailbox: 'disabled' } }],
  ])('round-trips %s, key order included', (_name, v) => {
    const line = JSON.stringify(encodeVerdict(v));
    const back = decodeVerdict(JSON.parse(line));
    expect(JSON.stringify(back)).toBe(JSON.stringify(v));
    // the fast path writes exactly what the generic one would
    expect(encodeLine(v)).toBe(line);
    expect(encodeLine(v, 1718000000)).toBe(JSON.stringify([1718000000, ...encodeVerdict(v)]));
  });

  it('reads journal lines written before the mailbox check, and writes the check as one trailing field', () => {
    expect(decodeVerdict(['a@example.com', 'v11100-', 0.9, 'mailsift-local', 1])?.details).toEqual({
      syntax: true, domain: 'example.com', mx: true, disposable: false, role: false,
    });
    const v: Verdict = { ...full, email: 'a@example.com', details: { syntax: true, domain: 'example.com', smtp: true, catchAll: false } };
    expect(JSON.stringify(encodeVerdict(v))).toBe('["a@example.com","r11----",0.73,"mailgun",1,null,"10"]');
    expect(decodeVerdict(['a@example.com', 'v11100-', 0.9, 'p', 1, null, 'x1'])).toBeUndefined();
  });

  it('is compact: the common verdict fits in well under 100 bytes', () => {
    const v: Verdict = { ...full, email: 'someone@example.com', details: { syntax: true, domain: 'example.com', mx: true, disposable: false, role: false } };
    expect(JSON.stringify(encodeVerdict(v))).toBe('["someone@example.com","r11100-",0.73,"mailgun",1]');
  });

  it('a run of verdicts that differ in one field each writes each one exactly (the shared tail never leaks)', () => {
    const base: Verdict = { ...full, email: 'a@example.com', details: { syntax: true, domain: 'example.com', mx: true } };
    const run: Verdict[] = [
      base,
      { ...base, email: 'b@example.org', details: { ...base.details, domain: 'example.org' } },
      { ...base, email: 'c@example.com', confidence: 0.5 },
      { ...base, email: 'd@example.com', provider: 'ses' },
      { ...base, email: 'e@example.com', status: 'valid' },
      { ...base, email: 'f@example.com', details: { ...base.details, mx: false } },
      { ...base, email: 'g@example.com', details: { ...base.details, domain: 'elsewhere.com' } },
      { ...base, email: 'h@example.com', details: { syntax: true, mx: true } },
      { ...base, email: 'i@example.com', details: { ...base.details, suggestion: 'i@example.org' } },
      { ...base, email: 'j@example.com' },
      { ...base, email: 'k@example.com', details: { ...base.details, smtp: true, catchAll: false } },
      { ...base, email: 'l@example.com', details: { ...base.details, smtp: true, catchAll: true } },
      { ...base, email: 'm@example.com', details: { ...base.details, catchAll: true } },
    ];
    for (const v of [...run, ...run.reverse()]) expect(encodeLine(v)).toBe(JSON.stringify(encodeVerdict(v)));
  });

  it('writes a batch as the lines of its verdicts, quoting any address, skipping rows without a verdict', () => {
    const batch: Verdict[] = [
      full,
      { ...full, email: 'plain@example.com', details: { domain: 'example.com' } },
      errorVerdict('lost@example.com', 'NETWORK', 'down'),
      { ...full, email: 'back\\slash@x.io', details: {} },
      { ...full, email: 'a\t😀@x.io', details: { domain: 'x.io' } },
      { ...full, email: 'lone\ud800@x.io', details: {} },
    ];
    const kept = batch.filter((v) => !v.error);
    expect(encodeLines(batch)).toBe(kept.map((v) => JSON.stringify(encodeVerdict(v)) + '\n').join(''));
    expect(encodeLines(batch, 1718000000)).toBe(kept.map((v) => JSON.stringify([1718000000, ...encodeVerdict(v)]) + '\n').join(''));
  });

  it('writes a confidence that is not a finite number as unknown', () => {
    expect(encodeLine({ ...full, confidence: Number.NaN })).toContain(',null,"mailgun"');
  });

  it.each([[null], [[]], [['a@b', 'x11100-', 1, 'p', 1]], [['a@b', 'v11', 1, 'p', 1]], [['a@b', 'v11100-', '1', 'p', 1]], [[1, 'v11100-', 1, 'p', 1]]])(
    'refuses a damaged entry %j',
    (entry) => expect(decodeVerdict(entry)).toBeUndefined(),
  );

  it('keys addresses with the domain compared case-insensitively', () => {
    expect(addressKey('Ann@EXAMPLE.com')).toBe(addressKey('Ann@example.COM'));
    expect(addressKey('Ann@example.com')).not.toBe(addressKey('ann@example.com'));
  });
});
