import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { runInProcess } from '../support/run-in-process.js';

// For a file input, whatever would end the run in exit 2 is found before the
// first request (a pre-flight pass over the file), and --dry-run reports it:
// the test API's request log holds no request at all.
const KEY = 'sk_test_refuse_early';
const ROWS = 30_000;
const dir = mkdtempSync(join(tmpdir(), 'mailsift-refuse-early-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const csvRows = (bad: (i: number) => string | undefined): string =>
  'id,email,note\n' + Array.from({ length: ROWS }, (_, i) => bad(i) ?? `${i},user${i}@example.com,ok`).join('\n') + '\n';

/** The rows, with an é in Latin-1 (one byte, not UTF-8) in row `i + 1`'s note. */
function latin1At(i: number): Buffer {
  const [before, after] = csvRows((k) => (k === i ? `${k},user${k}@example.com,caf\u0000` : undefined)).split('\u0000') as [string, string];
  return Buffer.concat([Buffer.from(before), Buffer.from([0xe9]), Buffer.from(after)]);
}

const CASES: [string, string, string | Buffer, string[], RegExp][] = [
  [
    'a stray field in row 20,001',
    'stray.csv',
    csvRows((i) => (i === 19_999 ? `${i},user${i}@example.com,ok,stray` : undefined)),
    [],
    /^mailsift: stray\.csv: row 20001 has a cell in column D \(4\), past the 3 columns of the header and the first rows/,
  ],
  [
    'a 40,000-character cell with -o out.xlsx',
    'long.csv',
    csvRows((i) => (i === 15_000 ? `${i},user${i}@example.com,${'x'.repeat(40_000)}` : undefined)),
    ['-o', 'out.xlsx'],
    /^mailsift: out\.xlsx: cell C15002 holds 40,000 characters, past the 32,767 an \.xlsx cell holds; write CSV instead \(-o out\.csv\)\n$/,
  ],
  // every row reaches one of the --split files, so a cell no .xlsx holds ends the run as surely as with -o
  [
    'a 40,000-character cell with --split DIR --format xlsx',
    'long-split.csv',
    csvRows((i) => (i === 15_000 ? `${i},user${i}@example.com,${'x'.repeat(40_000)}` : undefined)),
    ['--split', 'by-status', '--format', 'xlsx'],
    /^mailsift: --split by-status: cell C15002 holds 40,000 characters, past the 32,767 an \.xlsx cell holds; write CSV instead \(--format csv\)\n$/,
  ],
  [
    'a byte that is not UTF-8 in row 25,001',
    'latin1.csv',
    latin1At(25_000),
    [],
    /^mailsift: latin1\.csv: invalid UTF-8 at byte \d+; for a legacy export give its encoding/,
  ],
  [
    'a quote never closed at the end',
    'quote.csv',
    csvRows((i) => (i === ROWS - 1 ? `${i},"user${i}@example.com,ok` : undefined)),
    [],
    /^mailsift: quote\.csv: malformed CSV: /,
  ],
  [
    'a line of 1.1 MB in a text list',
    'list.txt',
    Array.from({ length: ROWS }, (_, i) => (i === 20_000 ? 'x'.repeat(1_100_000) : `user${i}@example.com`)).join('\n') + '\n',
    [],
    /^mailsift: list\.txt: line 20001 is longer than 1 MB/,
  ],
];

describe('a file input that would end in exit 2 is refused before the first request', () => {
  let api: FaultServer;
  beforeAll(async () => {
    api = await startFaultServer({ apiKey: KEY });
  });
  afterAll(() => api.close());

  it.each(CASES)('%s: exit 2, no request; --dry-run says the same', async (_what, name, content, args, why) => {
    writeFileSync(join(dir, name), content);
    const env = { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: api.url };
    const before = api.requests.length;
    const r = await runInProcess(['validate', name, '--batch-size', '100', ...args], { cwd: dir, env });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(why);
    expect(r.stdout).toBe('');
    expect(api.requests.length - before).toBe(0);
    if (args.includes('-o')) expect(existsSync(join(dir, args[args.indexOf('-o') + 1]!))).toBe(false);
    if (args.includes('--split')) expect(existsSync(join(dir, args[args.indexOf('--split') + 1]!))).toBe(false);

    const dry = await runInProcess(['validate', name, '--dry-run', ...args], { cwd: dir, env });
    expect(dry.code, dry.stderr).toBe(2);
    expect(dry.stderr).toMatch(why);
    expect(api.requests.length - before).toBe(0);
  });
});

describe('a file the quick scan is unsure of, which the reader reads', () => {
  it('a quote inside an unquoted field (5" screen) in row 20,001: the run goes on, every row written', async () => {
    const api = await startFaultServer({ apiKey: KEY });
    try {
      writeFileSync(
        join(dir, 'inch.csv'),
        csvRows((i) => (i === 19_999 ? `${i},user${i}@example.com,5" screen` : undefined)),
      );
      const r = await runInProcess(['validate', 'inch.csv', '-o', 'inch-out.csv'], { cwd: dir, env: { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: api.url } });
      expect(r.code, r.stderr).toBe(0);
      expect(api.requests.flatMap((q) => q.emails)).toHaveLength(ROWS);
    } finally {
      await api.close();
    }
  });
});
