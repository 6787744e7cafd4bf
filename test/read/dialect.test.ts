// The file you brought, given back in its own dialect: files made as their
// producers make them — Excel's conventions written by hand (its `sep=` line,
// the European `;` CSV in Windows-1252 with CRLF, "CSV UTF-8" with its BOM,
// "Text (Tab delimited)", the UTF-16 "Unicode Text", the old Mac's CR), files
// edited on two systems, LibreOffice's own "Unicode" export — through the
// command (in-process) against the test API. Every case: output row N is input row N,
// every input cell byte-identical in the input's encoding, only the addresses
// sent; the wrong file is exit 2 with nothing sent.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import iconv from 'iconv-lite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { parseCsv, type CliResult } from '../support/run-cli.js';
import { runInProcess } from '../support/run-in-process.js';
import { missingToolNow } from '../support/tools.js';

const KEY = 'sk_test_dialect_7c1e';
const dir = mkdtempSync(join(tmpdir(), 'mailsift-dialect-'));
const SOFFICE = ['/usr/bin/soffice', '/usr/local/bin/soffice', '/usr/lib/libreoffice/program/soffice'].find(existsSync);

let server: FaultServer;
beforeAll(async () => {
  server = await startFaultServer({ apiKey: KEY });
});
afterAll(async () => {
  await server?.close();
});

/** How a producer writes a delimited file. */
interface Producer {
  delimiter: string;
  /** one line ending for every line, or one per line (a file edited on two systems) */
  eol: string | string[];
  encoding: 'utf-8' | 'utf-16le' | 'windows-1252' | 'macintosh';
  bom: boolean;
  /** Excel's `sep=X` first line */
  sep?: string;
}

/** A cell as Excel writes it: quoted only when it holds the delimiter, a quote or a line break. */
const cell = (value: string, delimiter: string): string => (value.includes(delimiter) || /["\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);

/** The bytes of a file of `rows` as `p` writes it. */
function made(rows: string[][], p: Producer): Buffer {
  const lines = [...(p.sep === undefined ? [] : [p.sep]), ...rows.map((r) => r.map((c) => cell(c, p.delimiter)).join(p.delimiter))];
  const text = lines.map((l, i) => l + (typeof p.eol === 'string' ? p.eol : p.eol[i % p.eol.length])).join('');
  return Buffer.concat([p.bom ? bomOf(p.encoding) : Buffer.alloc(0), iconv.encode(text, p.encoding)]);
}

const bomOf = (encoding: string): Buffer => (encoding === 'utf-16le' ? Buffer.from([0xff, 0xfe]) : Buffer.from([0xef, 0xbb, 0xbf]));

/**
 * Bytes as text one-for-one, so that cells compare byte for byte: each byte a
 * character (UTF-8, Windows-1252), or each 16-bit unit (UTF-16 LE).
 */
const view = (bytes: Buffer, encoding: string): string => bytes.toString(encoding === 'utf-16le' ? 'utf16le' : 'latin1');

/** The rows of an output, each cell as its bytes (see view), the BOM and the sep= line apart. */
function outputOf(bytes: Buffer, p: Producer): { bom: boolean; sep?: string; rows: string[][]; eols: string[] } {
  let text = view(bytes, p.encoding);
  const bomText = view(bomOf(p.encoding), p.encoding);
  const bom = text.startsWith(bomText);
  if (bom) text = text.slice(bomText.length);
  let sep: string | undefined;
  if (/^sep=/i.test(text)) {
    sep = text.slice(0, text.search(/\r|\n/));
    text = text.slice(sep.length).replace(/^(\r\n|\r|\n)/, '');
  }
  const eols = [...text.replace(/"[^"]*"/g, '').matchAll(/\r\n|\r|\n/g)].map((m) => m[0]);
  return { bom, ...(sep === undefined ? {} : { sep }), rows: parseCsv(text, p.delimiter), eols };
}

/** The cells as the output holds them: in the input's encoding, byte for byte (see view). */
const asBytes = (rows: string[][], encoding: Producer['encoding']): string[][] => rows.map((r) => r.map((c) => view(iconv.encode(c, encoding), encoding)));

interface Run {
  r: CliResult;
  out: Buffer | undefined;
  /** the addresses the test API was asked about in this run */
  sent: string[];
  /** requests the test API got in this run */
  requests: number;
}

async function validate(name: string, bytes: Buffer, args: string[] = []): Promise<Run> {
  const input = join(dir, name);
  writeFileSync(input, bytes);
  const output = join(dir, `${name}.out.csv`);
  rmSync(output, { force: true });
  const before = server.requests.length;
  const r = await runInProcess(['validate', input, '-o', output, '-q', ...args], { env: { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: server.url } });
  const mine = server.requests.slice(before);
  return { r, out: existsSync(output) ? readFileSync(output) : undefined, sent: mine.flatMap((q) => q.emails), requests: mine.length };
}

/**
 * Output row N is input row N and every input cell is byte-identical, the
 * verdict columns after them; the dialect is the producer's.
 */
function expectRowForRow(run: Run, rows: string[][], p: Producer, status: string[]): void {
  expect(run.r.stderr).toBe('');
  expect(run.r.code).toBe(0);
  const out = outputOf(run.out!, p);
  // row for row, cell for cell, first
  expect(out.rows).toHaveLength(rows.length);
  const width = rows[0]!.length;
  expect(out.rows.map((r) => r.slice(0, width))).toEqual(asBytes(rows, p.encoding));
  expect(out.rows[0]!.slice(width, width + 2)).toEqual(['status', 'reason']);
  expect(out.rows.slice(1).map((r) => r[width])).toEqual(status);
  expect(out.rows.every((r) => r.length === width + 15)).toBe(true);
  // then the dialect: a spreadsheet opens the output as it opened the input
  expect(out.bom).toBe(p.bom);
  expect(out.sep).toBe(p.sep);
  expect(new Set(out.eols)).toEqual(new Set([typeof p.eol === 'string' ? p.eol : p.eol[0]]));
}

const CONTACTS: string[][] = [
  ['Name', 'E-Mail', 'Notiz'],
  ['Zoë Ångström', 'zoe@example.com', 'Grüße, «bitte» anrufen'],
  ['José Müller', 'invalid.jose@example.org', 'Zeile eins\r\nZeile zwei'],
  ['François', 'francois@example.fr', 'sagt "hallo"; 5 €'],
];
const ADDRESSES = ['zoe@example.com', 'invalid.jose@example.org', 'francois@example.fr'];

describe('line endings: CRLF, LF and CR each end a record, mixed in one file too', () => {
  const rows: string[][] = [
    ['email', 'name'],
    ['a@example.com', 'A'],
    ['b@example.com', 'B, "bee"'],
    ['c@example.com', 'line\none'],
  ];
  it.each<[string, string[]]>([
    ['a CRLF header and LF rows (edited on two systems)', ['\r\n', '\n', '\n', '\n']],
    ['LF first, CRLF later: no cell keeps a \\r', ['\n', '\r\n', '\r\n', '\r\n']],
    ['CR, an old Mac export', ['\r']],
    ['all three in one file', ['\r\n', '\r', '\n', '\r\n']],
  ])('%s', async (_what, eol) => {
    const p: Producer = { delimiter: ',', eol, encoding: 'utf-8', bom: false };
    const run = await validate('mixed.csv', made(rows, p));
    expectRowForRow(run, rows, p, ['valid', 'valid', 'valid']);
    expect(run.sent.sort()).toEqual(['a@example.com', 'b@example.com', 'c@example.com']);
  });
});

describe("Excel's sep= line", () => {
  it('sets the delimiter, is neither a row nor the header, and comes out unchanged first (European Excel: ;, Windows-1252, CRLF)', async () => {
    const p: Producer = { delimiter: ';', eol: '\r\n', encoding: 'windows-1252', bom: false, sep: 'sep=;' };
    const run = await validate('sep.csv', made(CONTACTS, p), ['--encoding', 'windows-1252']);
    expectRowForRow(run, CONTACTS, p, ['valid', 'invalid', 'valid']);
    expect(run.sent.sort()).toEqual([...ADDRESSES].sort());
  });

  it('names any one character, whatever the file is called', async () => {
    const p: Producer = { delimiter: '|', eol: '\r\n', encoding: 'utf-8', bom: true, sep: 'sep=|' };
    const rows = [
      ['id', 'mail', 'note'],
      ['1', 'a@example.com', 'x, y; z'],
      ['2', 'b@example.com', 'a|b'],
    ];
    const run = await validate('pipe.txt', made(rows, p));
    expectRowForRow(run, rows, p, ['valid', 'valid']);
  });

  it('follows --output-delimiter, so that Excel still splits the output right', async () => {
    const p: Producer = { delimiter: ';', eol: '\r\n', encoding: 'utf-8', bom: false, sep: 'sep=;' };
    const run = await validate('sep-comma.csv', made(CONTACTS, p), ['--output-delimiter', ',']);
    expect(run.r.code).toBe(0);
    expect(run.out!.toString('utf8').split('\r\n')[0]).toBe('sep=,');
    expect(parseCsv(run.out!.toString('utf8').split('\r\n').slice(1).join('\r\n')).map((r) => r.slice(0, 3))).toEqual(CONTACTS);
  });
});

describe("the output in the input's dialect", () => {
  it('European "CSV UTF-8": ;, a BOM, CRLF', async () => {
    const p: Producer = { delimiter: ';', eol: '\r\n', encoding: 'utf-8', bom: true };
    const run = await validate('euro-utf8.csv', made(CONTACTS, p));
    expectRowForRow(run, CONTACTS, p, ['valid', 'invalid', 'valid']);
  });

  it('Windows-1252 stays Windows-1252, every byte of it (its five undefined ones too)', async () => {
    // every byte from 0x80 to 0xFF in one cell, as an ERP writes what it holds
    const all = iconv.decode(Buffer.from(Array.from({ length: 128 }, (_, k) => 0x80 + k)), 'latin1');
    const raw = Buffer.concat([
      Buffer.from('Name;E-Mail;Bytes\r\nJos\xe9;jose@example.com;', 'latin1'),
      Buffer.from(all, 'latin1'),
      Buffer.from('\r\n', 'latin1'),
    ]);
    const run = await validate('ansi.csv', raw, ['--encoding', 'windows-1252']);
    expect(run.r.stderr).toBe('');
    expect(run.r.code).toBe(0);
    const lines = run.out!.toString('latin1').split('\r\n');
    expect(lines[0]).toBe('Name;E-Mail;Bytes;status;reason;is_valid;confidence;provider;syntax;domain;mx;disposable;role;free;suggestion;smtp;catch_all;error');
    expect(lines[1]!.startsWith(`Jos\xe9;jose@example.com;${all};valid;`)).toBe(true);
    expect(lines).toHaveLength(3);
  });

  it('flags change it: --output-delimiter, --output-eol, --output-encoding, --no-bom', async () => {
    const p: Producer = { delimiter: ';', eol: '\r\n', encoding: 'windows-1252', bom: false };
    const run = await validate('to-utf8.csv', made(CONTACTS, p), [
      '--encoding',
      'windows-1252',
      '--output-delimiter',
      ',',
      '--output-eol',
      'lf',
      '--output-encoding',
      'utf-8',
      '--bom',
    ]);
    expect(run.r.code).toBe(0);
    const text = run.out!.toString('utf8');
    expect(text.startsWith('\ufeffName,E-Mail,Notiz,status,')).toBe(true);
    expect(text.includes('\r')).toBe(true); // the cell's own CRLF, quoted
    expect(parseCsv(text.slice(1)).map((r) => r.slice(0, 3))).toEqual(CONTACTS);
    const plain = await validate('no-bom.csv', made(CONTACTS, { ...p, encoding: 'utf-8', bom: true }), ['--no-bom']);
    expect(plain.out!.subarray(0, 4).toString('utf8')).toBe('Name');
  });

  it('says what an encoding asked for cannot hold (written "?"), even with --quiet', async () => {
    const rows = [
      ['name', 'email'],
      ['李雷', 'lei@example.cn'],
    ];
    const run = await validate('cjk.csv', made(rows, { delimiter: ',', eol: '\n', encoding: 'utf-8', bom: false }), ['--output-encoding', 'windows-1252']);
    expect(run.r.code).toBe(0);
    expect(run.r.stderr).toMatch(
      /cjk\.csv\.out\.csv: 2 characters that the output's encoding cannot hold written as "\?" \(--output-encoding utf-8 keeps every character\)/,
    );
  });

  it('--bom where the encoding has none is exit 2, and nothing is sent', async () => {
    const p: Producer = { delimiter: ';', eol: '\r\n', encoding: 'windows-1252', bom: false };
    const run = await validate('bom-1252.csv', made(CONTACTS, p), ['--encoding', 'windows-1252', '--bom']);
    expect(run.r.code).toBe(2);
    expect(run.r.stderr).toMatch(/^mailsift: --bom: windows-1252 has no byte-order mark; for UTF-8 with one, add --output-encoding utf-8\n$/);
    expect(run.requests).toBe(0);
    expect(run.out).toBeUndefined();
  });
});

describe('a table named .txt is a table', () => {
  it('Excel\'s "Text (Tab delimited)": Windows-1252, tabs, CRLF', async () => {
    const p: Producer = { delimiter: '\t', eol: '\r\n', encoding: 'windows-1252', bom: false };
    const run = await validate('contacts.txt', made(CONTACTS, p), ['--encoding', 'windows-1252']);
    expectRowForRow(run, CONTACTS, p, ['valid', 'invalid', 'valid']);
    // the addresses alone were sent, not whole lines (one request, three addresses)
    expect(run.sent.sort()).toEqual([...ADDRESSES].sort());
  });

  it('Excel\'s "Unicode Text": UTF-16 LE with its BOM, tabs, CRLF — and the output likewise', async () => {
    const p: Producer = { delimiter: '\t', eol: '\r\n', encoding: 'utf-16le', bom: true };
    const rows = [...CONTACTS, ['李雷', 'lei@example.cn', '😀']];
    const run = await validate('unicode.txt', made(rows, p));
    expectRowForRow(run, rows, p, ['valid', 'invalid', 'valid', 'valid']);
    expect(run.sent.sort()).toEqual([...ADDRESSES, 'lei@example.cn'].sort());
  });

  it('LibreOffice\'s own "Unicode" text export reads as a table, and its output opens in LibreOffice with the same settings', async (ctx) => {
    if (!SOFFICE) {
      missingToolNow(ctx, 'LibreOffice', 'soffice not found (apt-get install libreoffice-calc-nogui)');
      return;
    }
    const lo = join(dir, 'lo');
    mkdirSync(lo, { recursive: true });
    const rows = CONTACTS.map((r) => r.map((c) => c.replace('\r\n', ' ')));
    const p = (t: string): string => `<text:p>${t.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</text:p>`;
    const table = rows
      .map((r) => `<table:table-row>${r.map((c) => `<table:table-cell office:value-type="string">${p(c)}</table:table-cell>`).join('')}</table:table-row>`)
      .join('');
    writeFileSync(
      join(lo, 'contacts.fods'),
      `<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.spreadsheet">
<office:body><office:spreadsheet><table:table table:name="Contacts">${table}</table:table></office:spreadsheet></office:body></office:document>`,
    );
    const profile = pathToFileURL(join(lo, 'profile')).href;
    const run = promisify(execFile);
    // tab, ", UTF-16 (LibreOffice's "Unicode", 65535): what it writes for a .txt table
    const UNICODE_TEXT = 'Text - txt - csv (StarCalc):9,34,65535,1';
    await run(SOFFICE, [`-env:UserInstallation=${profile}`, '--headless', '--convert-to', `txt:${UNICODE_TEXT}`, '--outdir', lo, join(lo, 'contacts.fods')], {
      timeout: 150_000,
    });
    const exported = readFileSync(join(lo, 'contacts.txt'));
    expect(exported.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xfe]));

    const checked = await validate('lo-contacts.txt', exported);
    expect(checked.r.code).toBe(0);
    expect(checked.sent.sort()).toEqual([...ADDRESSES].sort());
    const out = checked.out!;
    expect(out.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xfe]));
    // LibreOffice opens mailsift's output with the settings that read the input, and sees every cell where it was
    writeFileSync(join(lo, 'checked.txt'), out);
    await run(
      SOFFICE,
      [
        `-env:UserInstallation=${profile}`,
        '--headless',
        `--infilter=${UNICODE_TEXT}`,
        '--convert-to',
        'csv:Text - txt - csv (StarCalc):44,34,76,1',
        '--outdir',
        join(lo, 'back'),
        join(lo, 'checked.txt'),
      ],
      { timeout: 150_000 },
    );
    const back = parseCsv(readFileSync(join(lo, 'back', 'checked.csv'), 'utf8'));
    expect(back.map((r) => r.slice(0, 3))).toEqual(rows);
    expect(back.map((r) => r[3])).toEqual(['status', 'valid', 'invalid', 'valid']);
  }, 320_000);
});

describe('a header that holds another delimiter inside its names', () => {
  // German CRMs head a column "Name, Vorname": as many commas as semicolons in the
  // first record, so counting them alone split the file on its commas and paid for
  // "anna@…;Müller, Anna" — every row invalid, exit 0.
  const german = [
    ['E-Mail', 'Name, Vorname'],
    ['anna@example.de', 'Müller, Anna'],
    ['invalid.bob@example.de', 'Meier, Bob'],
    ['', 'Schulz, Carla'],
    ['dora@example.de', 'Wagner, Dora'],
  ];
  const names = [
    ['Firma, Abteilung, Team', 'E-Mail'],
    ['Acme, Vertrieb, Nord', 'anna@example.de'],
    ['Acme, Einkauf, Süd', 'invalid.bob@example.de'],
  ];
  const lastFirst = [
    ['Last, First', 'Email'],
    ['Müller, Anna', 'anna@example.com'],
    ['Meier, Bob', 'invalid.bob@example.org'],
  ];
  it.each<[string, string, string[][], Producer, string[]]>([
    [
      'German Excel: ";" and a "Name, Vorname" header (Windows-1252, CRLF)',
      'crm.csv',
      german,
      { delimiter: ';', eol: '\r\n', encoding: 'windows-1252', bom: false },
      ['valid', 'invalid', 'invalid', 'valid'],
    ],
    [
      '";" and a header with more commas than semicolons',
      'teams.csv',
      names,
      { delimiter: ';', eol: '\r\n', encoding: 'windows-1252', bom: false },
      ['valid', 'invalid'],
    ],
    [
      'Excel\'s "Text (Tab delimited)" with a "Last, First" header, saved as .txt',
      'people.txt',
      lastFirst,
      { delimiter: '\t', eol: '\r\n', encoding: 'windows-1252', bom: false },
      ['valid', 'invalid'],
    ],
    ['the same named .tsv', 'people.tsv', lastFirst, { delimiter: '\t', eol: '\r\n', encoding: 'windows-1252', bom: false }, ['valid', 'invalid']],
  ])('%s: split on the delimiter that gives address cells, the addresses alone paid for', async (_what, name, rows, p, status) => {
    const run = await validate(name, made(rows, p), ['--encoding', 'windows-1252']);
    expectRowForRow(run, rows, p, status);
    expect(run.sent.sort()).toEqual(
      rows
        .slice(1)
        .map((r) => r.find((c) => c.includes('@')))
        .filter((a) => a !== undefined)
        .sort(),
    );
  });
});

describe('the wrong file is exit 2, named as what it looks like, and nothing is sent', () => {
  // the issue's README: 2 addresses in 14 lines passed the old "1 line in 10 holds @" rule
  const readme = `# Contacts tool\n\nA small tool to keep our contact list tidy.\nIt reads the CRM export and writes it back.\n\n## Usage\n\nRun it on the export, then import the result.\nQuestions go to help@example.com.\nBugs go to bugs@example.com.\n\n## Licence\n\nMIT, see LICENSE.\nWritten in 2024.\nMaintained by the ops team.\nThanks to everyone who helped.\nMore to come.\nThe end.\n`;
  it.each<[string, string, RegExp]>([
    [
      'README.md',
      readme,
      /README\.md looks like prose or a document, not a list \(2 of its 14 non-blank lines hold an address; a list has one address a line\)/,
    ],
    [
      'contacts.vcf',
      'BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Jane Doe\r\nN:Doe;Jane;;;\r\nEMAIL;TYPE=INTERNET:jane@example.com\r\nEND:VCARD\r\nBEGIN:VCARD\r\nVERSION:3.0\r\nFN:Bob\r\nEMAIL;TYPE=INTERNET:bob@example.com\r\nEND:VCARD\r\n',
      /contacts\.vcf looks like a vCard file \(\.vcf\), not a list: export the contacts as CSV/,
    ],
    [
      'users.ndjson',
      '{"email":"a@example.com","name":"A"}\n{"email":"b@example.com","name":"B"}\n{"email":"c@example.com","name":"C"}\n',
      /users\.ndjson looks like NDJSON/,
    ],
    [
      'message.eml',
      'Return-Path: <jane@example.com>\r\nReceived: from mail.example.com by mx.example.org; Tue, 2 Jan 2024 10:00:00 +0000\r\nFrom: Jane Doe <jane@example.com>\r\nTo: bob@example.org\r\nSubject: the list\r\nMessage-ID: <1@example.com>\r\n\r\nHi Bob, here it is.\r\n',
      /message\.eml looks like a saved email/,
    ],
  ])('%s', async (name, content, message) => {
    const run = await validate(name, Buffer.from(content));
    expect(run.r.code).toBe(2);
    expect(run.r.stderr).toMatch(message);
    expect(run.r.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.requests).toBe(0);
    expect(run.out).toBeUndefined();
  });

  it('on stdin too', async () => {
    const before = server.requests.length;
    const r = await runInProcess(['validate'], {
      env: { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: server.url },
      stdin: '{"email":"a@example.com"}\n{"email":"b@example.com"}\n',
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^mailsift: stdin looks like NDJSON/);
    expect(r.stdout).toBe('');
    expect(server.requests.length).toBe(before);
  });
});

describe('column names that collide', () => {
  it('an input with status and reason columns gets the appended ones prefixed, and a notice says so', async () => {
    const rows = [
      ['email', 'status', 'Reason'],
      ['a@example.com', 'customer', 'signed up'],
      ['invalid.b@example.com', 'lead', ''],
    ];
    const p: Producer = { delimiter: ',', eol: '\n', encoding: 'utf-8', bom: false };
    const run = await validate('crm.csv', made(rows, p), ['--no-progress']);
    expect(run.r.code).toBe(0);
    const out = outputOf(run.out!, p).rows;
    expect(out[0]).toEqual([
      'email',
      'status',
      'Reason',
      'mailsift_status',
      'mailsift_reason',
      'mailsift_is_valid',
      'mailsift_confidence',
      'mailsift_provider',
      'mailsift_syntax',
      'mailsift_domain',
      'mailsift_mx',
      'mailsift_disposable',
      'mailsift_role',
      'mailsift_free',
      'mailsift_suggestion',
      'mailsift_smtp',
      'mailsift_catch_all',
      'mailsift_error',
    ]);
    expect(new Set(out[0]).size).toBe(out[0]!.length);
    expect(out.map((r) => r.slice(0, 5))).toEqual([
      out[0]!.slice(0, 5),
      ['a@example.com', 'customer', 'signed up', 'valid', ''],
      ['invalid.b@example.com', 'lead', '', 'invalid', 'no_mail_server'],
    ]);
    // -q silences notices: without it, the notice says why the names changed
    const loud = await runInProcess(['validate', join(dir, 'crm.csv'), '--columns', 'status'], {
      env: { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: server.url },
    });
    expect(loud.stderr).toMatch(
      /^mailsift: "status": the input already has a column of that name, so the appended columns are named mailsift_status \(prefix mailsift_\)$/m,
    );
    expect(parseCsv(loud.stdout)[0]).toEqual(['email', 'status', 'Reason', 'mailsift_status']);
  });

  it('JSON and NDJSON keep every input cell under a key of its own, __proto__ and repeated names included', async () => {
    const rows = [
      ['email', 'a (4)', 'a', 'a', '__proto__', ''],
      ['a@example.com', '1', '2', '3', '4', '5'],
    ];
    const csv = made(rows, { delimiter: ',', eol: '\n', encoding: 'utf-8', bom: false });
    for (const format of ['ndjson', 'json']) {
      const run = await validate(`dupes-${format}.csv`, csv, ['--format', format]);
      expect(run.r.code).toBe(0);
      const text = run.out!.toString('utf8');
      const result = format === 'json' ? JSON.parse(text).results[0] : JSON.parse(text.split('\n')[0]!);
      expect(Object.entries(result.input)).toEqual([
        ['a (4)', '1'],
        ['a', '2'],
        ['a (4) (2)', '3'],
        ['__proto__', '4'],
        ['column 6', '5'],
      ]);
    }
  });
});
