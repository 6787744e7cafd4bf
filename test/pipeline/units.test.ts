import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { addressKey } from '../../src/dedupe/address-key.js';
import { Claim, VerdictMemo } from '../../src/dedupe/verdict-memo.js';
import { detectEmailColumn, looksHeaderless } from '../../src/read/column.js';
import { openInput } from '../../src/read/open-input.js';
import { precheck } from '../../src/pipeline/precheck.js';
import { detectDelimiter, looksLikeCsv } from '../../src/read/sniff.js';
import { matchResults, normalizeBulk } from '../../src/engines/api/normalize.js';
import type { Verdict } from '../../src/verdict.js';
import { csvCell } from '../../src/write/csv-cell.js';

describe('address column detection', () => {
  const sample = [
    ['1', 'Ann', 'ann@example.com', 'note@x'],
    ['2', 'Bob', 'bob@example.com', ''],
  ];
  it.each<[string, string[], string | undefined, number]>([
    ['a header named email', ['id', 'name', 'email', 'notes'], undefined, 2],
    ['E-Mail, any case', ['id', 'name', 'E-Mail', 'notes'], undefined, 2],
    ['email_address', ['id', 'name', 'EMAIL_ADDRESS', 'notes'], undefined, 2],
    ['"Email Address"', ['id', 'name', 'Email Address', 'notes'], undefined, 2],
    ['no such header: the column with most @', ['id', 'name', 'contact', 'notes'], undefined, 2],
    ['--column by number', ['id', 'name', 'contact', 'notes'], '4', 3],
    ['--column by name', ['id', 'name', 'contact', 'notes'], 'contact', 2],
    ['--column by name, other case', ['id', 'name', 'contact', 'notes'], 'CONTACT', 2],
  ])('%s', (_name, header, requested, expected) => {
    expect(detectEmailColumn(header, sample, requested)).toBe(expected);
  });

  it.each<[string, string[], string[][], string | undefined, RegExp]>([
    ['no @ anywhere', ['a', 'b'], [['1', '2']], undefined, /no address column/],
    ['--column 0', ['a', 'b'], [], '0', /has 2 column/],
    ['--column past the end', ['a', 'b'], [], '3', /has 2 column/],
    ['--column unknown name', ['a', 'b'], [], 'mail', /no such column/],
  ])('refuses %s', (_name, header, rows, requested, message) => {
    expect(() => detectEmailColumn(header, rows, requested)).toThrow(message);
  });

  it.each<[string[], boolean]>([
    [['id', 'email'], false],
    [['1', 'ann@example.com'], true],
    [['email', 'ann@example.com'], false],
  ])('first row %j is data: %s', (row, expected) => expect(looksHeaderless(row)).toBe(expected));

  it.each<[string, string | undefined]>([
    ['found', undefined],
    ['chosen by number', '2'],
  ])('a headerless CSV keeps its first row when the column is %s', async (_name, column) => {
    const stdin = Readable.from([Buffer.from('Bob,bob@example.com\nAnn,ann@example.com\n')]);
    const input = await openInput({ path: '-', stdin, column });
    const emails: string[] = [];
    for await (const rows of input.rows) emails.push(...rows.map((r) => r.email));
    expect(input.header).toEqual(['column1', 'email']);
    expect(emails).toEqual(['bob@example.com', 'ann@example.com']);
  });
});

describe('precheck (conservative: never rejects what an SMTP server accepts)', () => {
  it.each<[string, string | undefined]>([
    ['', 'empty'],
    ['plainaddress', 'no @'],
    [`${'a'.repeat(250)}@b.com`, 'longer than 254 characters'],
    ['a\u0000b@example.com', 'control character'],
    ['a b@example.com', 'white space'],
    ['a\u00a0b@example.com', 'white space'],
    ['ok@example.com', undefined],
    ['"john smith"@example.com', undefined],
    ['"a\\" b"@example.com', undefined],
    ['user@[192.168.0.1]', undefined],
    ['用户@例子.广告', undefined],
    ['a@b', undefined],
    ['@nolocal.com', undefined], // the engine rejects it, with its reasons
  ])('%j → %s', (email, reason) => expect(precheck(email)).toBe(reason));
});

describe('CSV sniffing', () => {
  it.each<[string, boolean, string]>([
    ['a@example.com\nb@example.com\n', false, ','],
    ['email\na@example.com\n', false, ','],
    ['id,email\n1,a@example.com\n', true, ','],
    ['id;email;name\n', true, ';'],
    ['id\temail\n', true, '\t'],
    ['"a,b";c;d\n', true, ';'],
    ['"john,smith"@example.com\n', false, ','],
  ])('%j: csv %s, delimiter %j', (head, csv, delimiter) => {
    expect(looksLikeCsv(head)).toBe(csv);
    expect(detectDelimiter(head)).toBe(delimiter);
  });
});

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

describe('CSV cells', () => {
  it.each<[string, string]>([
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['=1+2', "'=1+2"],
    ['+cmd', "'+cmd"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tx', "'\tx"],
    ['-5', '-5'],
    ['-2.5e3', '-2.5e3'],
    ['-1+2', "'-1+2"],
    ['=HYPERLINK("x"),y', `"'=HYPERLINK(""x""),y"`],
  ])('%j → %s', (value, cell) => expect(csvCell(value)).toBe(cell));
});

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
