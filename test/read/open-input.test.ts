// What a user's file turns into, in-process: its rows, or the one-line usage
// error (exit 2) naming what is wrong with it. The binary adds only the exit
// code and stderr, which validate-e2e checks once for a file error.
import ExcelJS from 'exceljs';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { openInput, type OpenInputOptions } from '../../src/read/open-input.js';
import { gzipSync } from 'node:zlib';
import { zip } from '../support/workbook.js';

const WORD_RELS =
  '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>';

const dir = mkdtempSync(join(tmpdir(), 'mailsift-open-input-'));
const file = (name: string, content: string | Buffer): string => {
  writeFileSync(join(dir, name), content);
  return join(dir, name);
};

/** Opens `path` and reads every row, as a run does: the rows' cells, or the error's message. */
async function read(path: string, options: Omit<OpenInputOptions, 'path'> = {}): Promise<{ header: string[]; rows: string[][] } | string> {
  try {
    const input = await openInput({ path, ...options });
    const rows: string[][] = [];
    for await (const chunk of input.rows) for (const row of chunk) rows.push(row.fields);
    return { header: input.header, rows };
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    expect(err.exitCode).toBe(2);
    expect(err.message.split('\n'), 'one line').toHaveLength(1);
    return err.message;
  }
}

/** A workbook with a decoy first sheet, and the contacts on a sheet named Leads. */
async function workbook(name: string): Promise<string> {
  const wb = new ExcelJS.Workbook();
  wb.addWorksheet('Notes').addRow(['written by', 'someone@mx.test']);
  const leads = wb.addWorksheet('Leads');
  leads.addRow(['Name', 'E-mail']);
  leads.addRow(['Jane', 'Jane@mx.test']);
  await wb.xlsx.writeFile(join(dir, name));
  return join(dir, name);
}

describe('a file that cannot be validated: one line naming the problem', () => {
  const cases: [string, () => Promise<[string, Omit<OpenInputOptions, 'path'>?]>, RegExp][] = [
    ['a missing file', async () => [join(dir, 'nope.csv')], /^cannot read .*nope\.csv: no such file/],
    [
      'a directory',
      async () => {
        mkdirSync(join(dir, 'sub'), { recursive: true });
        return [join(dir, 'sub')];
      },
      /is a directory/,
    ],
    ['an empty input', async () => [file('empty.txt', '')], /empty\.txt: empty input, no addresses to validate$/],
    ['no address column', async () => [file('nocol.csv', 'a,b\n1,2\n3,4\n')], /no address column/],
    ['a malformed CSV', async () => [file('broken.csv', 'email,name\n"a@example.com,x\n')], /malformed CSV/],
    ['invalid UTF-8', async () => [file('latin1.txt', Buffer.from([0x61, 0x40, 0xe9, 0x2e, 0x63, 0x6f, 0x0a]))], /invalid UTF-8/],
    ['an unknown --column', async () => [file('col.csv', 'email\na@example.com\n'), { column: 'mail2' }], /no such column/],
    [
      'invalid UTF-8 deep in a CSV (past the first chunk read)',
      async () => {
        const rows = Array.from({ length: 5000 }, (_, i) => `n${i},user${i}@example.com\n`).join('');
        return [file('late-latin1.csv', Buffer.concat([Buffer.from(`name,email\n${rows}`), Buffer.from([0x6e, 0xe9, 0x2c, 0x78, 0x40, 0x79, 0x0a])]))];
      },
      /late-latin1\.csv: invalid UTF-8/,
    ],
    [
      'a Windows-1252 export: the byte named, --encoding suggested',
      async () => [file('legacy.csv', Buffer.from('name,email\nJos\xe9,Jane@mx.test\n', 'latin1'))],
      /legacy\.csv: invalid UTF-8 at byte 14; .*--encoding windows-1252/,
    ],
    [
      '--sheet that is not there',
      async () => [await workbook('bad-sheet.xlsx'), { sheet: 'Leeds' }],
      /--sheet Leeds: no such sheet in .*bad-sheet\.xlsx \(sheets: Notes, Leads\)/,
    ],
    ['an .xlsx that is no workbook', async () => [file('fake.xlsx', 'email\na@mx.test\n')], /fake\.xlsx: not an Excel workbook/],
    [
      'a legacy .xls',
      async () => [file('old.xls.csv', Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]))],
      /legacy Excel \.xls workbook or a password-protected \.xlsx: save it as \.xlsx \(no password\) or CSV/,
    ],
    ['--sheet on a CSV', async () => [file('plain.csv', 'email\na@mx.test\n'), { sheet: '1' }], /--sheet 1: .*plain\.csv is not an Excel workbook/],
    // the wrong file, named as what it looks like rather than "invalid UTF-8 … --encoding"
    [
      'a PNG image',
      async () => [file('logo.png', Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex'))],
      /logo\.png is a PNG image, not a list of addresses or a CSV file$/,
    ],
    ['a PDF', async () => [file('invoice.txt', '%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n')], /invoice\.txt is a PDF document/],
    ['a gzip archive', async () => [file('list.csv.gz', gzipSync('email\na@mx.test\n'))], /list\.csv\.gz is a gzip archive \(decompress it first\)/],
    [
      'an executable',
      async () => [file('a.out', Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), Buffer.alloc(56)]))],
      /a\.out is an executable \(ELF\)/,
    ],
    [
      'a binary file of no known kind',
      async () => [file('blob.csv', Buffer.from([1, 2, 0, 0, 0, 0, 7, 0, 0xff, 0, 0, 0, 9, 9, 0, 0]))],
      /blob\.csv is a binary file/,
    ],
    [
      'a zip that is not a workbook',
      async () => [file('photos.zip', zip([{ name: 'a.txt', data: 'hello' }]))],
      /photos\.zip is a zip archive, not an Excel workbook/,
    ],
    [
      'a Word document named .xlsx',
      async () => [
        file(
          'letter.xlsx',
          zip([
            { name: '_rels/.rels', data: WORD_RELS },
            { name: 'word/document.xml', data: '<w:document/>' },
          ]),
        ),
      ],
      /letter\.xlsx is a Word document \(\.docx\), not an Excel workbook/,
    ],
    // a text that is no list or table, named by its content
    [
      'a vCard named .txt',
      async () => [file('contacts.txt', 'BEGIN:VCARD\r\nVERSION:3.0\r\nEMAIL:jane@x.test\r\nEND:VCARD\r\n')],
      /contacts\.txt looks like a vCard file \(\.vcf\), not a list: export the contacts as CSV$/,
    ],
    [
      'prose',
      async () => [file('notes.md', '# Notes\n\nCall Jane.\nMail bob@x.test.\nThen lunch.\n')],
      /notes\.md looks like prose or a document, not a list \(1 of its 4 non-blank lines holds an address; a list has one address a line\)$/,
    ],
    [
      'a sep= line naming the quote',
      async () => [file('quote.csv', 'sep="\nemail\na@x.test\n')],
      /quote\.csv: its first line sep=" names the quote as the delimiter, which no CSV can have$/,
    ],
    [
      'an OpenDocument spreadsheet',
      async () => [
        file(
          'list.ods',
          zip([
            { name: 'mimetype', data: 'application/vnd.oasis.opendocument.spreadsheet', method: 0 },
            { name: 'content.xml', data: '<office:document-content/>' },
          ]),
        ),
      ],
      /list\.ods is an OpenDocument file \(\.ods, \.odt\): save it as \.xlsx or CSV/,
    ],
  ];
  it.each(cases)('%s', async (_name, setUp, message) => {
    const [path, options] = await setUp();
    expect(await read(path, options)).toMatch(message);
  });

  it('the byte offset is right far into the file and across chunk boundaries', async () => {
    // 64 KiB reads: put a two-byte "é" across the first boundary, and a bad byte later
    const line = 'x@mx.test\n';
    const head = Buffer.from(line.repeat(6553) + 'abcde'); // 65535 bytes
    const body = Buffer.concat([head, Buffer.from('é@mx.test\n'), Buffer.from(line.repeat(100)), Buffer.from([0x61, 0xc3, 0x28])]);
    expect(await read(file('deep.txt', body))).toContain(`invalid UTF-8 at byte ${body.length - 2};`);
  });

  it.each(['runaway.txt', 'runaway.csv'])('a line without end (%s) stops naming the line, instead of reading it whole and echoing it', async (name) => {
    const message = await read(file(name, `email\nJane@mx.test\n${'x'.repeat(2 * 1024 * 1024)}`));
    expect(message).toMatch(new RegExp(`${name.replace('.', '\\.')}: line 3 is longer than 1 MB`));
    expect((message as string).length).toBeLessThan(300);
  });
});

describe('what a text is, by its content, and its dialect', () => {
  async function dialect(path: string, options: Omit<OpenInputOptions, 'path'> = {}): Promise<unknown> {
    const input = await openInput({ path, ...options });
    const rows: string[][] = [];
    for await (const chunk of input.rows) for (const row of chunk) rows.push(row.fields);
    input.close();
    return { kind: input.kind, header: input.header, rows, dialect: input.dialect };
  }

  it.each<[string, string | Buffer, Omit<OpenInputOptions, 'path'>, object]>([
    [
      "Excel's Text (Tab delimited), named .txt",
      Buffer.from('Name\tE-mail\r\nJos\xe9\tj@x.test\r\n', 'latin1'),
      { encoding: 'windows-1252' },
      {
        kind: 'csv',
        header: ['Name', 'E-mail'],
        rows: [['José', 'j@x.test']],
        dialect: { delimiter: '\t', eol: '\r\n', encoding: 'windows-1252', bom: false },
      },
    ],
    [
      'a sep= line: the delimiter, not a row, kept for the output',
      '\ufeffsep=;\r\nName;Email\r\nA;a@x.test\r\n',
      {},
      {
        kind: 'csv',
        header: ['Name', 'Email'],
        rows: [['A', 'a@x.test']],
        dialect: { delimiter: ';', eol: '\r\n', encoding: 'utf-8', bom: true, sep: 'sep=' },
      },
    ],
    [
      'a CRLF header and LF rows: three records, no \\r kept',
      'email,n\r\na@x.test,1\nb@x.test,2\n',
      {},
      {
        kind: 'csv',
        rows: [
          ['a@x.test', '1'],
          ['b@x.test', '2'],
        ],
        dialect: { delimiter: ',', eol: '\r\n' },
      },
    ],
    ['a list with CR line ends', 'a@x.test\rb@x.test\r', {}, { kind: 'text', rows: [['a@x.test'], ['b@x.test']], dialect: { delimiter: ',', eol: '\r' } }],
  ])('%s', async (_what, content, options, expected) => {
    expect(await dialect(file(`shape-${_what.length}.txt`, content), options)).toMatchObject(expected);
  });
});

describe('encodings and sheets', () => {
  it('UTF-16 without a BOM, whose zero bytes are text, is not taken for a binary file', async () => {
    const path = file('utf16-nobom.csv', Buffer.from('Name,Email\r\nZoë,Jane@mx.test\r\n', 'utf16le'));
    expect(await read(path)).toEqual({ header: ['Name', 'Email'], rows: [['Zoë', 'Jane@mx.test']] });
  });

  it('decodes UTF-16 LE and BE by their byte-order mark (Excel "Unicode text")', async () => {
    const text = 'Name\tEmail\r\nZoë\tJane@mx.test\r\n';
    const le = file('unicode-le.csv', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]));
    const be = file('unicode-be.csv', Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()]));
    for (const path of [le, be]) expect(await read(path)).toEqual({ header: ['Name', 'Email'], rows: [['Zoë', 'Jane@mx.test']] });
  });

  it('--encoding windows-1252 reads a legacy export', async () => {
    const path = file('legacy-ok.csv', Buffer.from('name,email\nJos\xe9,Jane@mx.test\nM\xfcller,admin@mx.test\n', 'latin1'));
    expect(await read(path, { encoding: 'windows-1252' })).toEqual({
      header: ['name', 'email'],
      rows: [
        ['José', 'Jane@mx.test'],
        ['Müller', 'admin@mx.test'],
      ],
    });
  });

  it('a workbook: the first sheet by default, a decoy whose one row is data, not a header; another by number', async () => {
    const path = await workbook('sheets.xlsx');
    expect(await read(path)).toEqual({ header: ['column1', 'email'], rows: [['written by', 'someone@mx.test']] });
    expect(await read(path, { sheet: '2' })).toEqual({ header: ['Name', 'E-mail'], rows: [['Jane', 'Jane@mx.test']] });
  });
});
