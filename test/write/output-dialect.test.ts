// The CSV output in the input's dialect, changed by flags; the appended
// columns' names apart from the input's; JSON's input keys one per cell.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { DEFAULT_DIALECT, encoderFor, type Dialect } from '../../src/dialect.js';
import { reasonOf } from '../../src/reason.js';
import type { Verdict } from '../../src/verdict.js';
import { cellWriters } from '../../src/write/csv-cell.js';
import { appendedPrefix, ALL_COLUMNS, columnNames, outputDialect, resolveColumns, type Columns } from '../../src/write/output-plan.js';
import { createRowWriter } from '../../src/write/row-writer.js';
import { Sink } from '../../src/write/sink.js';
import { inputKeys, inputObject } from '../../src/write/verdict-columns.js';

const v: Verdict = {
  email: 'a@b.test',
  isValid: true,
  status: 'valid',
  confidence: 0.95,
  provider: 'p;q,r',
  details: { syntax: true, domain: 'b.test', mx: true, disposable: false, role: false, free: true },
};

async function written(
  dialect: Dialect,
  header: string[],
  rows: string[][],
  columns: Columns = resolveColumns(['status', 'provider'], 'csv', header),
): Promise<Buffer> {
  const out: Buffer[] = [];
  const stream = new Writable({ write: (chunk, _enc, done) => (out.push(chunk as Buffer), done()) });
  const encoder = dialect.encoding === 'utf-8' ? undefined : await encoderFor(dialect.encoding);
  const sink = new Sink(stream, 'test', encoder);
  const writer = createRowWriter('csv', sink, header, columns, { dialect });
  await writer.begin();
  for (const fields of rows) writer.row(fields, v, reasonOf(v));
  await sink.flush();
  return Buffer.concat(out);
}

describe('the CSV writer in a dialect', () => {
  it("writes Excel's European CSV: sep= line, ;, CRLF, a BOM; a cell is quoted for the delimiter, not for a comma", async () => {
    const dialect: Dialect = { delimiter: ';', eol: '\r\n', encoding: 'utf-8', bom: true, sep: 'sep=' };
    const out = await written(
      dialect,
      ['Name', 'E-Mail'],
      [
        ['Müller, Jo', 'a@b.test'],
        ['x;y', 'a@b.test'],
      ],
    );
    expect(out.toString('utf8')).toBe('\ufeffsep=;\r\nName;E-Mail;status;provider\r\nMüller, Jo;a@b.test;valid;"p;q,r"\r\n"x;y";a@b.test;valid;"p;q,r"\r\n');
  });

  it('writes Windows-1252 bytes, and UTF-16 LE with its BOM', async () => {
    const cp = await written({ delimiter: '\t', eol: '\r\n', encoding: 'windows-1252', bom: false }, ['Name', 'Email'], [['José €', 'a@b.test']]);
    expect(cp.toString('latin1')).toBe('Name\tEmail\tstatus\tprovider\r\nJos\xe9 \x80\ta@b.test\tvalid\tp;q,r\r\n');
    const le = await written({ delimiter: '\t', eol: '\r\n', encoding: 'utf-16le', bom: true }, ['Name', 'Email'], [['Zoë', 'a@b.test']]);
    expect(le.equals(Buffer.from('\ufeffName\tEmail\tstatus\tprovider\r\nZoë\ta@b.test\tvalid\tp;q,r\r\n', 'utf16le'))).toBe(true);
  });

  it('quotes what a letter as delimiter would split (a sep= line may name any character)', async () => {
    const out = await written({ ...DEFAULT_DIALECT, delimiter: 'a' }, ['n', 'e'], [['x', 'y']], ALL_COLUMNS);
    expect(out.toString('utf8').split('\n')[1]).toBe('xaya"valid"aatruea0.95ap;q,ratrueab.testatruea"false"a"false"atrueaaaa');
  });

  it.each<[string, string, string]>([
    [';', 'a,b', 'a,b'],
    [';', 'a;b', '"a;b"'],
    ['\t', 'a\tb', '"a\tb"'],
    ['|', 'say "hi"', '"say ""hi"""'],
    [']', 'x]', '"x]"'],
  ])('delimiter %j: %j → %s', (delimiter, value, cell) => {
    expect(cellWriters(delimiter).plain(value)).toBe(cell);
  });
});

describe("the output's dialect: the input's, changed by the flags", () => {
  const euro: Dialect = { delimiter: ';', eol: '\r\n', encoding: 'windows-1252', bom: false, sep: 'sep=' };
  const utf8Bom: Dialect = { delimiter: ';', eol: '\r\n', encoding: 'utf-8', bom: true };
  it.each<[string, Dialect | undefined, object, Dialect]>([
    ['no input dialect (a workbook): comma, LF, UTF-8', undefined, {}, DEFAULT_DIALECT],
    ["the input's", euro, {}, euro],
    [
      'each flag changes its part; sep= follows the delimiter',
      euro,
      { delimiter: ',', eol: '\n', encoding: 'utf-8' },
      { delimiter: ',', eol: '\n', encoding: 'utf-8', bom: false, sep: 'sep=' },
    ],
    ['--bom on a UTF-8 output', euro, { encoding: 'utf-8', bom: true }, { ...euro, encoding: 'utf-8', bom: true }],
    ['--no-bom', utf8Bom, { bom: false }, { ...utf8Bom, bom: false }],
    ["an input's BOM is kept in UTF-16", utf8Bom, { encoding: 'utf-16le' }, { ...utf8Bom, encoding: 'utf-16le' }],
    ['…and dropped in an encoding that has none', utf8Bom, { encoding: 'windows-1252' }, { ...utf8Bom, encoding: 'windows-1252', bom: false }],
  ])('%s', (_what, input, flags, expected) => {
    expect(outputDialect(input, flags)).toEqual(expected);
  });

  it('--bom where the encoding has none is exit 2, naming the way out', () => {
    expect(() => outputDialect(euro, { bom: true })).toThrow('--bom: windows-1252 has no byte-order mark; for UTF-8 with one, add --output-encoding utf-8');
  });
});

describe('names that collide', () => {
  it.each<[string[], string[], string, string[]]>([
    [['email', 'name'], ['status', 'reason'], '', []],
    [['email', 'status', 'Reason '], ['status', 'reason'], 'mailsift_', ['status', 'Reason ']],
    [['email', 'status', 'mailsift_status'], ['status'], 'mailsift2_', ['status']],
    // only the columns written count
    [['email', 'reason'], ['status'], '', []],
  ])('input %j, appended %j: prefix %j', (header, appended, prefix, clashes) => {
    expect(appendedPrefix(['input', ...(appended as Columns['order'])], header)).toEqual({ prefix, clashes });
  });

  it('the .xlsx header takes the prefix as the CSV one does; a text input has no name to collide with', () => {
    const header = ['email', 'Status'];
    expect(columnNames(resolveColumns(['status', 'reason'], 'xlsx', header), header)).toEqual(['email', 'Status', 'mailsift_status', 'mailsift_reason']);
    expect(columnNames(resolveColumns(['email', 'status'], 'text', ['email']), ['email'])).toEqual(['email', 'status']);
  });

  it('every input cell keeps a JSON key of its own, __proto__ included', () => {
    const header = ['email', 'a (4)', 'a', 'a', '__proto__', '', 'column 6'];
    const keys = inputKeys(header, 0)!;
    expect(keys).toEqual([undefined, 'a (4)', 'a', 'a (4) (2)', '__proto__', 'column 6 (2)', 'column 6']);
    const object = inputObject(keys, ['x@y.test', '1', '2', '3', '4', '5', '6']);
    expect(JSON.parse(JSON.stringify(object))).toEqual(JSON.parse('{"a (4)":"1","a":"2","a (4) (2)":"3","__proto__":"4","column 6 (2)":"5","column 6":"6"}'));
    expect(Object.keys(JSON.parse(JSON.stringify(object)))).toHaveLength(6);
  });
});
