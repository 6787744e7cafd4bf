import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanPlainCsv, scanPlainText, type CsvScan } from '../../src/read/csv-scan.js';
import { MAX_LINE } from '../../src/read/decode.js';
import { openInput } from '../../src/read/open-input.js';
import { seeded } from '../support/fault-server.js';

// The pre-flight's quick scan vouches for a plain CSV or says it is unsure;
// whatever it vouches for, the reader itself reads without an error, every row
// within the table's width.
async function scan(text: string, width = 3, cellChars?: number, cut?: number): Promise<CsvScan> {
  async function* chunks(): AsyncGenerator<string> {
    if (cut === undefined) yield text;
    else for (let i = 0; i < text.length; i += cut) yield text.slice(i, i + cut);
  }
  return scanPlainCsv(chunks(), { delimiter: ',', width, cellChars });
}

describe('scanPlainCsv', () => {
  it.each<[string, string, CsvScan]>([
    ['plain LF', 'a,b,c\n1,2,3\n', { records: 2 }],
    ['plain CRLF', 'a,b,c\r\n1,2,3\r\n', { records: 2 }],
    ['no final line end', 'a,b,c\n1,2,3', { records: 2 }],
    ['blank lines and short rows', 'a,b,c\n\n1\n,,\n', { records: 4 }],
    ['quoted fields: delimiters, quotes, line ends inside', 'a,b,c\n"x,y","say ""hi""","two\nlines"\n', { records: 2 }],
    ['empty cells past the width', 'a,b,c\n1,2,3,,,\n', { records: 2 }],
    ['a quote inside an unquoted field', 'a,b,c\n5",2,3\n', 'unsure'],
    ['text after a closing quote', 'a,b,c\n"x"y,2,3\n', 'unsure'],
    ['a quote never closed', 'a,b,c\n"x,2,3\n', 'unsure'],
    ['a cell past the width', 'a,b,c\n1,2,3,4\n', 'unsure'],
    ['CR line ends (a Mac export)', 'a,b,c\r1,2,3\r', { records: 2 }],
    ['LF, CRLF and CR mixed', 'a,b,c\n1,2,3\r\n4,5,6\r7\n', { records: 4 }],
    ['a CR ending the file', 'a,b,c\n1,2,3\r', { records: 2 }],
  ])('%s', async (_what, text, expected) => {
    expect(await scan(text)).toEqual(expected);
    // the same, whatever the chunks
    for (const cut of [1, 2, 3, 5]) expect(await scan(text, 3, undefined, cut)).toEqual(expected);
  });

  it('a cell longer than cellChars, quoted or not, is left to the reader', async () => {
    expect(await scan('a,b,c\n1,xxxx,3\n', 3, 4)).toEqual({ records: 2 });
    expect(await scan('a,b,c\n1,xxxxx,3\n', 3, 4)).toBe('unsure');
    expect(await scan('a,b,c\n1,"x""xx",3\n', 3, 4)).toEqual({ records: 2 });
    expect(await scan('a,b,c\n1,"xx""xx",3\n', 3, 4)).toBe('unsure');
  });
});

describe('what the scan vouches for, the reader reads', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mailsift-csv-scan-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('500 seeded files of quotes, delimiters and line ends', async () => {
    const rand = seeded(40);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const good = ['a@x.io', 'b', '', '"q"', '"a,b"', '"x""y"', '"l\nm"', '"r\r\ns"', ' '];
    const bad = ['c"d', '"e"f', '"', 'g\rh'];
    const piece = (): string => (rand() < 0.95 ? pick(good) : pick(bad));
    let vouched = 0;
    for (let n = 0; n < 500; n++) {
      const eol = pick(['\n', '\r\n', '\n', '\r\n', '\r']);
      const rows = ['id,email,note'];
      for (let r = 0; r < 2 + Math.floor(rand() * 5); r++) rows.push(Array.from({ length: 1 + Math.floor(rand() * 4) }, piece).join(','));
      const text = rows.join(rand() < 0.1 ? pick(['\n', '\r\n']) : eol) + (rand() < 0.5 ? eol : '');
      const path = join(dir, `f${n}.csv`);
      await writeFile(path, text);
      let width: number;
      let rowsRead: string[][] = [];
      try {
        const input = await openInput({ path, column: '2' });
        width = input.header.length;
        for await (const chunk of input.rows) rowsRead = rowsRead.concat(chunk.map((row) => row.fields));
      } catch {
        // the reader refuses it: the scan must not vouch for it, whatever the width it was given
        expect(await scan(text, 3), JSON.stringify(text)).toBe('unsure');
        continue;
      }
      const result = await scan(text, 3);
      if (result === 'unsure') continue;
      vouched++;
      expect(width, JSON.stringify(text)).toBe(3);
      expect(rowsRead.every((row) => row.length === 3)).toBe(true);
    }
    expect(vouched).toBeGreaterThan(50);
  });
});

// The same quick scan for a text list: it vouches only for what the reader
// reads without an error, and counts at least its rows.
async function scanText(text: string, cellChars?: number, cut?: number): Promise<CsvScan> {
  async function* chunks(): AsyncGenerator<string> {
    if (cut === undefined) yield text;
    else for (let i = 0; i < text.length; i += cut) yield text.slice(i, i + cut);
  }
  return scanPlainText(chunks(), { cellChars });
}

describe('scanPlainText', () => {
  it.each<[string, string, CsvScan]>([
    ['LF', 'a@x.io\nb@y.io\n', { records: 2 }],
    ['CRLF', 'a@x.io\r\nb@y.io\r\n', { records: 2 }],
    ['CR (a Mac export)', 'a@x.io\rb@y.io\r', { records: 2 }],
    ['mixed, and no final line end', 'a@x.io\nb@y.io\r\nc\rd', { records: 4 }],
    ['blank lines', '\na@x.io\n\n\n', { records: 4 }],
  ])('%s', async (_what, text, expected) => {
    expect(await scanText(text)).toEqual(expected);
    for (const cut of [1, 2, 3, 5]) expect(await scanText(text, undefined, cut)).toEqual(expected);
  });

  it("a line longer than cellChars, or near the reader's own cap, is left to the reader", async () => {
    expect(await scanText('a@x\nxxxx\r\n', 4)).toEqual({ records: 2 });
    expect(await scanText('a@x\nxxxxx\r\n', 4)).toBe('unsure');
    const long = 'x'.repeat(MAX_LINE / 2 + 1);
    for (const cut of [undefined, 1000, 4096]) {
      expect(await scanText(`a@x.io\n${long}\nb@y.io\n`, undefined, cut)).toBe('unsure');
      expect(await scanText(`a@x.io\n${long}`, undefined, cut)).toBe('unsure');
      expect(await scanText(`a@x.io\n${long.slice(1)}\n`, undefined, cut)).toEqual({ records: 2 });
    }
  });
});

describe('what the text scan vouches for, the reader reads', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mailsift-text-scan-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('seeded lists of line ends, blank lines and lines past the cap', async () => {
    const rand = seeded(41);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const long = 'y'.repeat(MAX_LINE + 10);
    let vouched = 0;
    let refused = 0;
    for (let n = 0; n < 40; n++) {
      const lines = ['a@x.io'];
      for (let r = 0; r < 2 + Math.floor(rand() * 5); r++) lines.push(rand() < 0.15 ? long : pick(['b@y.io', '', 'c@z.io']));
      const text = lines.map((l) => l + pick(['\n', '\r\n', '\r'])).join('') + (rand() < 0.5 ? 'd@w.io' : '');
      const path = join(dir, `f${n}.txt`);
      await writeFile(path, text);
      let rows = 0;
      // a file refused when opened never reaches the pre-flight: only what reading its rows refuses counts
      const input = await openInput({ path }).catch(() => undefined);
      if (input === undefined) continue;
      try {
        for await (const chunk of input.rows) rows += chunk.length;
      } catch (err) {
        refused++;
        expect(await scanText(text, undefined, 64 * 1024), `${(err as Error).message}: ${JSON.stringify(text.slice(0, 200))}`).toBe('unsure');
        continue;
      }
      const scanned = await scanText(text, undefined, 64 * 1024);
      if (scanned === 'unsure') continue;
      vouched++;
      expect(scanned.records).toBeGreaterThanOrEqual(rows);
    }
    expect(vouched).toBeGreaterThan(5);
    expect(refused).toBeGreaterThan(2);
  });
});
