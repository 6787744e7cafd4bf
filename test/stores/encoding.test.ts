import { crc32 as zlibCrc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { crc32 } from '../../src/codec/crc32.js';
import { suffices, TailPool, VerdictEncoder, type Evidence, type StoredLine } from '../../src/codec/verdict-encoding.js';
import { errorVerdict } from '../../src/verdict.js';
import type { Verdict } from '../../src/verdict.js';

const encoder = new VerdictEncoder('api');
const encodeLine = (v: Verdict, prefix?: number): string => encoder.line(v, prefix);

/** a line read back as a store reads it: the verdict under its own address, or what the line is */
function readBack(line: string, prefixed = false): Verdict | StoredLine['kind'] {
  const pool = new TailPool(prefixed);
  const r = pool.read(line);
  return r.kind === 'verdict' ? pool.verdict(r.email, r.tail) : r.kind;
}

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
    [
      'DNS unanswered',
      { ...full, status: 'unknown', isValid: undefined, email: 'a@s.test', details: { syntax: true, domain: 's.test', dnsFailure: 'unanswered' } },
    ],
    [
      'a greylisted mailbox',
      { ...full, status: 'valid', email: 'a@example.com', details: { syntax: true, domain: 'example.com', mx: true, smtpFailure: 'greylisted' } },
    ],
    [
      'our MAIL FROM refused, <> too',
      {
        ...full,
        status: 'unknown',
        isValid: undefined,
        email: 'a@example.com',
        details: { syntax: true, domain: 'example.com', mx: true, smtpFailure: 'sender-refused' },
      },
    ],
    [
      'a non-ASCII local part, a server without SMTPUTF8',
      {
        ...full,
        status: 'unknown',
        isValid: undefined,
        email: 'josé@example.com',
        details: { syntax: true, domain: 'example.com', mx: true, smtpFailure: 'no-utf8' },
      },
    ],
    [
      'a full mailbox on a catch-all domain',
      { ...full, email: 'a@example.com', details: { syntax: true, domain: 'example.com', smtp: false, catchAll: true, mailbox: 'full' } },
    ],
    [
      'a disabled mailbox',
      { ...full, status: 'invalid', email: 'a@example.com', details: { syntax: true, domain: 'example.com', smtp: false, mailbox: 'disabled' } },
    ],
  ])('round-trips %s, key order included, with or without the cache’s time', (_name, v) => {
    expect(JSON.stringify(readBack(encodeLine(v)))).toBe(JSON.stringify(v));
    expect(JSON.stringify(readBack(encodeLine(v, 1718000000), true))).toBe(JSON.stringify(v));
    // the batch path writes exactly what the one-line path does
    expect(encoder.lines([v])).toBe(encodeLine(v) + '\n');
    expect(encoder.lines([v], 1718000000)).toBe(encodeLine(v, 1718000000) + '\n');
  });

  it('ends every line with the CRC-32 of what precedes it, and carries the evidence in the code', () => {
    const v: Verdict = { ...full, email: 'someone@example.com', details: { syntax: true, domain: 'example.com', mx: true, disposable: false, role: false } };
    const line = new VerdictEncoder('dns').line(v);
    const body = '["someone@example.com","r11100-d",0.73,"mailgun",1';
    expect(line).toBe(`${body},"${zlibCrc32(body).toString(16).padStart(8, '0')}"]`);
    // compact: the common verdict in well under 100 bytes
    expect(line.length).toBeLessThan(80);
    const pool = new TailPool(false);
    const r = pool.read(line);
    expect(r.kind === 'verdict' && pool.evidence(r.tail)).toBe('dns');
  });

  it('hashes non-ASCII text as its UTF-8 bytes, as zlib does', () => {
    for (const s of ['', 'abc', 'jörg@bücher.de', 'a\t😀@x.io', '\u4e00\u4e01']) expect(crc32(s)).toBe(zlibCrc32(s));
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
    for (const v of [...run, ...run.reverse()]) expect(JSON.stringify(readBack(encodeLine(v)))).toBe(JSON.stringify(v));
  });

  it('writes a batch as the lines of its verdicts, quoting any address, skipping rows without a verdict', () => {
    const batch: Verdict[] = [
      full,
      { ...full, email: 'plain@example.com', details: { domain: 'example.com' } },
      errorVerdict('lost@example.com', 'NETWORK', 'down'),
      { ...full, email: 'back\\slash@x.io', details: {} },
      { ...full, email: 'a\t😀@x.io', details: { domain: 'x.io' } },
    ];
    const kept = batch.filter((v) => !v.error);
    const text = encoder.lines(batch);
    expect(text).toBe(kept.map((v) => encodeLine(v) + '\n').join(''));
    expect(
      text
        .split('\n')
        .slice(0, -1)
        .map((l) => JSON.stringify(readBack(l))),
    ).toEqual(kept.map((v) => JSON.stringify(v)));
  });

  it('writes a confidence that is not a finite number as unknown', () => {
    expect(encodeLine({ ...full, confidence: Number.NaN })).toContain(',null,"mailgun"');
  });

  /** `body` sealed with a correct checksum: damage the checksum cannot see, only the format */
  const sealed = (body: string): string => `${body},"${zlibCrc32(body).toString(16).padStart(8, '0')}"]`;

  it.each([
    ['not an array', '{"a":1'],
    ['a status out of its alphabet', '["a@b","x11100-a",1,"p",1'],
    ['a flag out of its alphabet', '["a@b","v11x00-a",1,"p",1'],
    ['an evidence out of its alphabet', '["a@b","v11100-q",1,"p",1'],
    ['a short code', '["a@b","v11",1,"p",1'],
    ['a confidence as a string', '["a@b","v11100-a","1","p",1'],
    ['a confidence out of 0..1', '["a@b","v11100-a",1.5,"p",1'],
    ['a confidence spelt otherwise', '["a@b","v11100-a",0.50,"p",1'],
    ['a number for the address', '[1,"v11100-a",1,"p",1'],
    ['a mailbox field out of its alphabet', '["a@b","v11100-a",1,"p",1,null,"1x"]'.slice(0, -1)],
    ['a mailbox field with a trailing -', '["a@b","v11100-a",1,"p",1,null,"10-"'],
    ['a mailbox field telling nothing', '["a@b","v11100-a",1,"p",1,null,"--"'],
    ['a null suggestion without a mailbox field', '["a@b","v11100-a",1,"p",1,null'],
    ['a provider escaped needlessly', '["a@b","v11100-a",1,"\\u0070",1'],
  ])('refuses a line with %s, even under a checksum that holds', (_name, body) => {
    expect(readBack(sealed(body))).toBe('damaged');
  });

  it('refuses a line whose checksum does not hold, and tells a line of the first format apart', () => {
    const line = encodeLine({ ...full, email: 'a@example.com', details: { domain: 'example.com' } });
    expect(readBack(line.replace('0.73', '0.74'))).toBe('damaged');
    expect(readBack(line.slice(0, -3) + '0"]')).toBe('damaged');
    expect(readBack('["a@example.com","v11100-",0.9,"mailsift-local",1]')).toBe('older');
    expect(readBack('[1718000000,"a@example.com","v11100-",0.9,"p",1,null,"10"]', true)).toBe('older');
    expect(readBack('["a@example.com","v11100-",0.9]')).toBe('damaged');
  });

  it.each<[Evidence, Evidence, boolean]>([
    ['dns', 'dns', true],
    ['syntax', 'dns', false],
    ['dns', 'syntax', true],
    ['dns', 'smtp', false],
    ['smtp', 'dns', true],
    ['smtp', 'syntax', true],
    ['api', 'api', true],
    ['api', 'dns', false],
    ['smtp', 'api', false],
  ])('a verdict resting on %s answers a run asking for %s: %s', (stored, asked, answers) => {
    expect(suffices(stored, asked)).toBe(answers);
  });
});
