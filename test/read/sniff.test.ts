import { describe, expect, it } from 'vitest';
import { classifyText, detectDelimiter, isAddressLine, lineEnding, sepLine } from '../../src/read/sniff.js';

describe('the delimiter of a table', () => {
  it.each<[string, string]>([
    ['id,email\n1,a@example.com\n', ','],
    ['id;email;name\n', ';'],
    ['id\temail\n', '\t'],
    ['"a,b";c;d\n', ';'],
    ['a@example.com\n', ','],
    // a delimiter inside the header's names: the one that splits the rows into address cells wins
    ['E-Mail;Name, Vorname\r\nanna@x.de;Müller, Anna\r\n', ';'],
    ['Firma, Abteilung, Team;E-Mail\nAcme, Vertrieb, Nord;anna@x.de\n', ';'],
    ['Last, First\tEmail\r\nMüller, Anna\tanna@x.com\r\n', '\t'],
    ['Last, First\tEmail\r\nDoe, Jane\tDoe, Jane <jane@x.com>\r\n', '\t'],
    ['id,emails\n1,a@x.com;b@y.com\n', ','],
    ['name,email\n"Doe; Jane",jane@x.com\n', ','],
  ])('%j: %j', (head, delimiter) => {
    expect(detectDelimiter(head)).toBe(delimiter);
  });
});

describe("a text's kind, by its content whatever its name", () => {
  const readme = `# mailsift\n\nBulk email validation, from the command line.\n\nWrite to help@x.example or to bob@x.example, we answer.\n${'Some prose about the tool, line after line, with commas here and there.\nAnd a line without one\n'.repeat(5)}`;
  it.each<[string, string, ReturnType<typeof classifyText>]>([
    ['a list', 'a@example.com\nb@example.com\n', { kind: 'list' }],
    ['a list under the header cut kept', 'email\na@example.com\n', { kind: 'list' }],
    ['a list of pasted addresses', 'Jane Doe <jane@x.com>\nmailto:bob@x.com\n"Doe, J" <j@x.com>\n', { kind: 'list' }],
    ['a list with a few bad lines', 'a@x.com\nb@x.com\nnot one\nc@x.com\n', { kind: 'list' }],
    ['a quoted local part with a comma is one address', '"john,smith"@example.com\n', { kind: 'list' }],
    ['a comma table', 'id,email\n1,a@example.com\n', { kind: 'table', delimiter: ',' }],
    ["Excel's Text (Tab delimited)", 'Name\tEmail\tPhone\r\nJosé\tj@x.com\t+1 555\r\nAnn\ta@x.com\t\r\n', { kind: 'table', delimiter: '\t' }],
    ['a table whose last rows lost their trailing delimiters', 'a;b;c\n1;2;3\n4;5;6\n7\n8\n', { kind: 'table', delimiter: ';' }],
    ['a sep= line names the delimiter', 'sep=|\r\nName|Email\r\n', { kind: 'table', delimiter: '|' }],
    ['one record with a delimiter', 'a@x.com,Jane\n', { kind: 'table', delimiter: ',' }],
  ])('%s', (_what, head, shape) => {
    expect(classifyText(head, true)).toEqual(shape);
  });

  it.each<[string, string, RegExp]>([
    ['a README', readme, /^prose or a document, not a list \(1 of its 13 non-blank lines holds an address; a list has one address a line\)$/],
    ['a vCard', 'BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Jane\r\nEMAIL;TYPE=INTERNET:jane@x.com\r\nEND:VCARD\r\n', /^a vCard file/],
    ['NDJSON', '{"email":"a@x.com","name":"A"}\n{"email":"b@x.com","name":"B"}\n', /^NDJSON/],
    ['a JSON document', '[\n  {"email": "a@x.com"},\n  {"email": "b@x.com"}\n]\n', /^a JSON document/],
    [
      "a saved email's headers",
      'Return-Path: <a@x.com>\nReceived: from x by y; Tue, 1 Jan 2024\nFrom: Jane <jane@x.com>\nTo: bob@x.com\nSubject: hi\n\nHello\n',
      /^a saved email/,
    ],
    ['an mbox', 'From jane@x.com Tue Jan  1 00:00:00 2024\nFrom: jane@x.com\n', /^a mailbox file \(mbox\)/],
    ['an HTML page', '<!DOCTYPE html>\n<p>a@x.com</p>\n', /^an HTML page/],
    ['an iCalendar file', 'BEGIN:VCALENDAR\nEND:VCALENDAR\n', /^an iCalendar file/],
  ])('%s is named', (_what, head, what) => {
    const shape = classifyText(head, true);
    expect(shape.kind).toBe('other');
    expect(shape.kind === 'other' && shape.what).toMatch(what);
  });

  it('leaves out the line cut off by the end of the head', () => {
    // the head of a long list ends mid-line: "Some pro" is not counted against it
    expect(classifyText('a@x.com\nb@x.com\nSome pro', false)).toEqual({ kind: 'list' });
    expect(classifyText('a@x.com\nSome prose\nmore', false).kind).toBe('other');
  });

  it('leaves a head of one unended line to the reader (a pipe that trickles, a file without line breaks)', () => {
    expect(classifyText('a@x.com', false)).toEqual({ kind: 'list' });
    expect(classifyText('x'.repeat(64 * 1024), false)).toEqual({ kind: 'list' });
    expect(classifyText('name,email', false)).toEqual({ kind: 'table', delimiter: ',' });
    expect(classifyText('{"email":"a@x.com"', false).kind).toBe('other');
  });
});

describe('lines', () => {
  it.each<[string, string]>([
    ['a\r\nb\n', '\r\n'],
    ['a\nb\r\n', '\n'],
    ['a\rb', '\r'],
    ['"x\ny"\r\n', '\r\n'],
    ['no ending', '\n'],
  ])('%j ends its lines with %j', (head, eol) => {
    expect(lineEnding(head)).toBe(eol);
  });

  it('reads sep= lines as Excel writes them, any one character', () => {
    expect(sepLine('sep=;\r\nName;Email\r\n')).toEqual({ prefix: 'sep=', delimiter: ';', length: 7 });
    expect(sepLine('SEP=\t\nx')).toEqual({ prefix: 'SEP=', delimiter: '\t', length: 6 });
    expect(sepLine('sep=,')).toEqual({ prefix: 'sep=', delimiter: ',', length: 5 });
    expect(sepLine('sep=;;\n')).toBeUndefined();
    expect(sepLine('separator,email\n')).toBeUndefined();
  });

  it.each<[string, boolean]>([
    ['a@x.com', true],
    ['  a@x.com ', true],
    ['Jane Doe <jane@x.com>', true],
    ['mailto:jane@x.com', true],
    ['@handle', false],
    ['write to a@x.com', false],
    ['a@x.com,b@y.com', false],
    ['', false],
  ])('%j is one address: %s', (line, yes) => {
    expect(isAddressLine(line)).toBe(yes);
  });
});
