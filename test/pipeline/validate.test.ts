// validate, the whole command run in-process (main(argv, io)) against the test API;
// what only a process shows (stdout on a full device, a pipe closed by head) is in validate-e2e.test.ts.
import { existsSync, mkdtempSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer, type FaultServerOptions } from '../support/fault-server.js';
import { parseCsv } from '../support/run-cli.js';
import { runInProcess } from '../support/run-in-process.js';

const KEY = 'sk_test_SECRET_4f9d2c';
const dir = mkdtempSync(join(tmpdir(), 'mailsift-e2e-'));
const file = (name: string, content: string | Buffer): string => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

let server: FaultServer;
async function serverWith(options: FaultServerOptions = {}): Promise<FaultServer> {
  server = await startFaultServer({ apiKey: KEY, ...options });
  return server;
}
afterEach(async () => {
  await server?.close();
});

const api = (): Record<string, string> => ({ MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: server.url });
const sentAddresses = (): string[] => server.requests.filter((r) => r.path === '/api/validate/bulk').flatMap((r) => r.emails);

describe('validate against the API', () => {
  it('keeps every CSV column as it was (quotes, commas, newlines, unicode, BOM) and appends the verdict', async () => {
    await serverWith();
    const input = file(
      'people.csv',
      '\uFEFFid,name,note,Email\r\n' +
        '1,"Smith, Jane","line one\nline two",jane@example.com\r\n' +
        '2,Zoë Ångström,"says ""hi""",invalid.zoe@example.org\r\n' +
        '3,李雷,,risky.lei@example.cn\r\n',
    );
    const r = await runInProcess(['validate', input], { env: api() });
    expect(r.stderr).not.toContain('Error');
    expect(r.code).toBe(0);
    // in the input's dialect: its BOM first, its CRLF
    expect(r.stdout.startsWith('\uFEFFid,name,note,Email,status,')).toBe(true);
    expect(r.stdout.endsWith('\r\n')).toBe(true);
    const rows = parseCsv(r.stdout.slice(1));
    expect(rows[0]).toEqual([
      'id',
      'name',
      'note',
      'Email',
      'status',
      'reason',
      'is_valid',
      'confidence',
      'provider',
      'syntax',
      'domain',
      'mx',
      'disposable',
      'role',
      'free',
      'suggestion',
      'smtp',
      'catch_all',
      'error',
    ]);
    expect(rows.slice(1).map((row) => row.slice(0, 4))).toEqual([
      ['1', 'Smith, Jane', 'line one\nline two', 'jane@example.com'],
      ['2', 'Zoë Ångström', 'says "hi"', 'invalid.zoe@example.org'],
      ['3', '李雷', '', 'risky.lei@example.cn'],
    ]);
    expect(rows.slice(1).map((row) => row[4])).toEqual(['valid', 'invalid', 'risky']);
    // the fault server's invalid has no MX; its risky is a role address
    expect(rows.slice(1).map((row) => row[5])).toEqual(['', 'no_mail_server', 'role']);
    expect(rows[1]![10]).toBe('example.com');
  });

  it('reads piped text from stdin and CSV from stdin by its content', async () => {
    await serverWith();
    const text = await runInProcess(['validate'], { env: api(), stdin: 'a@example.com\ninvalid.b@example.com\n' });
    expect(text.code).toBe(0);
    expect(parseCsv(text.stdout).map((r) => [r[0], r[1]])).toEqual([
      ['email', 'status'],
      ['a@example.com', 'valid'],
      ['invalid.b@example.com', 'invalid'],
    ]);
    const csv = await runInProcess(['validate', '-'], { env: api(), stdin: 'name;mail\nAnn;ann@example.com\n' });
    expect(csv.code).toBe(0);
    expect(parseCsv(csv.stdout, ';')[1]!.slice(0, 3)).toEqual(['Ann', 'ann@example.com', 'valid']);
  });

  it('sends each distinct address once and gives every duplicate row its verdict', async () => {
    await serverWith();
    const input = file('dupes.txt', ['x@example.com', 'y@example.com', 'x@example.com', 'x@EXAMPLE.COM', 'y@example.com'].join('\n'));
    const r = await runInProcess(['validate', input, '--format', 'json', '--batch-size', '2'], { env: api() });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.results.map((x: { email: string; status: string }) => `${x.email}:${x.status}`)).toEqual([
      'x@example.com:valid',
      'y@example.com:valid',
      'x@example.com:valid',
      'x@EXAMPLE.COM:valid',
      'y@example.com:valid',
    ]);
    expect(sentAddresses().sort()).toEqual(['x@example.com', 'y@example.com']);
    expect(out.summary).toMatchObject({ total: 5, duplicates: 3, valid: 5 });
  });

  it('marks empty and malformed cells invalid without sending them', async () => {
    await serverWith();
    const input = file('bad.csv', 'id,email\n1,\n2,not-an-address\n3,a b@example.com\n4,ok@example.com\n5,"x\ty@example.com"\n');
    const r = await runInProcess(['validate', input], { env: api() });
    expect(r.code).toBe(0);
    const rows = parseCsv(r.stdout).slice(1);
    expect(rows.map((row) => [row[0], row[2], row[3], row[6]])).toEqual([
      ['1', 'invalid', 'empty', 'precheck'],
      ['2', 'invalid', 'syntax', 'precheck'],
      ['3', 'invalid', 'syntax', 'precheck'],
      ['4', 'valid', '', 'fault-server'],
      ['5', 'invalid', 'syntax', 'precheck'],
    ]);
    expect(sentAddresses()).toEqual(['ok@example.com']);
  });

  it('restores input order over many batches answered shuffled, lower-cased and in Shape B', async () => {
    await serverWith({ shape: 'alternate', shuffle: true, lowercaseEcho: true, delayMs: 5 });
    const emails = Array.from({ length: 120 }, (_, i) => `${['', 'invalid.', 'risky.'][i % 3]}User${i}@Example.com`);
    const r = await runInProcess(['validate', file('many.txt', emails.join('\n') + '\n'), '--batch-size', '7', '--concurrency', '4', '--format', 'ndjson'], {
      env: api(),
    });
    expect(r.code).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.email)).toEqual(emails);
    // Shape B has no status: a risky address there reads as its isValid says (false here).
    lines.forEach((l, i) => expect(l.status).toBe(i % 3 === 2 && l.status === 'invalid' ? 'invalid' : ['valid', 'invalid', 'risky'][i % 3]));
    expect(lines.some((l) => l.status === 'risky')).toBe(true);
    expect(server.requests.length).toBe(Math.ceil(120 / 7));
  });

  it('asks again for an address the response left out, then reports MISSING_RESULT with exit 4', async () => {
    await serverWith({ omit: (email, attempt) => email.startsWith('gone') || (email.startsWith('late') && attempt === 1) });
    const input = file('missing.txt', 'a@example.com\ngone@example.com\nlate@example.com\n');
    const summaryPath = join(dir, 'missing-summary.json');
    const r = await runInProcess(['validate', input, '--summary', summaryPath], { env: api() });
    expect(r.code).toBe(4);
    const rows = parseCsv(r.stdout).slice(1);
    expect(rows.map((row) => [row[0], row[1], row[2], row[15]])).toEqual([
      ['a@example.com', 'valid', '', ''],
      ['gone@example.com', 'unknown', 'api_error', 'MISSING_RESULT'],
      ['late@example.com', 'valid', '', ''],
    ]);
    expect(sentAddresses().filter((e) => e === 'gone@example.com')).toHaveLength(2);
    expect(JSON.parse(readFileSync(summaryPath, 'utf8'))).toMatchObject({ total: 3, errors: 1, unknown: 1 });
  });

  it('--only keeps the rows a list cleaner wants', async () => {
    await serverWith();
    const input = file('only.txt', 'a@example.com\ninvalid.b@example.com\nrisky.c@example.com\nnope\n');
    const r = await runInProcess(['validate', input, '--only', 'valid,risky'], { env: api() });
    expect(r.code).toBe(0);
    expect(parseCsv(r.stdout).map((row) => row[0])).toEqual(['email', 'a@example.com', 'risky.c@example.com']);
  });

  it('keeps input cells that a spreadsheet would execute as they were', async () => {
    await serverWith();
    const input = file('formula.csv', 'name,email,amount\n=HYPERLINK("http://x"),+a@example.com,-5\n@SUM(A1),b@example.com,-1+2\n');
    const r = await runInProcess(['validate', input], { env: api() });
    expect(r.code).toBe(0);
    expect(
      parseCsv(r.stdout)
        .slice(1)
        .map((row) => row.slice(0, 3)),
    ).toEqual([
      ['=HYPERLINK("http://x")', '+a@example.com', '-5'],
      ['@SUM(A1)', 'b@example.com', '-1+2'],
    ]);
  });

  it('writes JSON with results and summary to a file named .json', async () => {
    await serverWith();
    const out = join(dir, 'out.json');
    const r = await runInProcess(['validate', file('j.txt', 'a@example.com\nrisky.r@example.com\n'), '-o', out], { env: api() });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    const json = JSON.parse(readFileSync(out, 'utf8'));
    expect(json.results[1]).toMatchObject({ email: 'risky.r@example.com', status: 'risky', provider: 'fault-server' });
    expect(json.summary).toMatchObject({ total: 2, valid: 1, risky: 1, requests: 1 });
  });

  it('stops at once with exit 3 when the key is refused, and never shows the key', async () => {
    await serverWith({ apiKey: 'another-key' });
    const emails = Array.from({ length: 50 }, (_, i) => `u${i}@example.com`).join('\n');
    const summaryPath = join(dir, 'auth-summary.json');
    const r = await runInProcess(['validate', file('auth.txt', emails), '--batch-size', '5', '--summary', summaryPath], { env: api() });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/refused the key/);
    expect(
      r.stderr
        .trim()
        .split('\n')
        .filter((l) => !l.includes('offline engine')),
    ).toHaveLength(1);
    expect(server.requests.length).toBeLessThanOrEqual(4);
    for (const text of [r.stdout, r.stderr]) expect(text).not.toContain(KEY);
  });

  it('never writes the key to stdout, stderr or the summary file', async () => {
    await serverWith({ failRate503: 0.5, seed: 3 });
    const keyFile = file('key.txt', `${KEY}\n`);
    const summaryPath = join(dir, 'secret-summary.json');
    const r = await runInProcess([
      'validate',
      file('k.txt', 'a@example.com\nb@example.com\n'),
      '--api-key-file',
      keyFile,
      '--base-url',
      server.url,
      '--summary',
      summaryPath,
      '--retries',
      '1',
      '--format',
      'json',
    ]);
    expect([0, 4]).toContain(r.code);
    for (const text of [r.stdout, r.stderr, readFileSync(summaryPath, 'utf8')]) expect(text).not.toContain(KEY);
    expect(server.requests.every((req) => req.authorization === `Bearer ${KEY}`)).toBe(true);
  });
});

describe('an API that is not there', () => {
  it('gives up after one batch has spent its retries: every row NETWORK, exit 4, no retry storm', async () => {
    const { createServer } = await import('node:net');
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as { port: number }).port;
    await new Promise((r) => probe.close(r)); // nothing listens there now
    const emails = Array.from({ length: 400 }, (_, i) => `u${i}@example.com`).join('\n');
    const r = await runInProcess(['validate', file('dead.txt', emails), '--batch-size', '10', '--retries', '2', '--format', 'ndjson'], {
      env: { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: `http://127.0.0.1:${port}` },
    });
    expect(r.code).toBe(4);
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows).toHaveLength(400);
    expect(new Set(rows.map((x) => `${x.status}:${x.error?.code}`))).toEqual(new Set(['unknown:NETWORK']));
    const summary = r.stderr.match(/requests\s+(\d+)/);
    expect(Number(summary?.[1])).toBeLessThanOrEqual(4 * 3); // at most the batches in flight, each with its retries
  });
});

// Which files and flags are refused, and in what words: test/read/open-input.test.ts and
// test/cli/plan.test.ts. Here, one of each through the whole command.
describe('bad input: one line on stderr, exit 2, nothing on stdout', () => {
  let tmp: string;
  beforeAll(() => {
    tmp = join(dir, 'bad');
    mkdirSync(tmp);
  });
  const cases: [string, () => string[], Record<string, string>, RegExp][] = [
    ['a missing file', () => ['validate', join(tmp, 'nope.csv')], {}, /^mailsift: cannot read .*nope\.csv: no such file/],
    [
      'a malformed CSV, found while reading',
      () => ['validate', file('unclosed.csv', 'email,name\na@example.com,x\n"b@example.com,y\n'), '--engine', 'local'],
      {},
      /^mailsift: .*malformed CSV/,
    ],
    [
      '--batch-size 5000',
      () => ['validate', file('ok1.txt', 'a@example.com\n'), '--batch-size', '5000'],
      {},
      /^mailsift: option '--batch-size <n>' argument '5000' is invalid/,
    ],
    [
      'plain http to a non-loopback host, the key never shown',
      () => ['validate', file('ok4.txt', 'a@example.com\n'), '--base-url', 'http://api.example.com'],
      { MAILSIFT_API_KEY: KEY },
      /^mailsift: --base-url http:\/\/api\.example\.com: plain http is only allowed to loopback/,
    ],
  ];
  it.each(cases)('%s', async (_name, args, env, message) => {
    const r = await runInProcess(args(), { env });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(r.stderr).not.toContain(KEY);
    expect(
      r.stderr
        .trim()
        .split('\n')
        .filter((l) => !/offline engine/.test(l)),
    ).toHaveLength(1);
  });

  it('an API engine without a key exits 3: a cron job that lost its key must not quietly validate offline and exit 0', async () => {
    const nokey = await runInProcess(['validate', file('ok5.txt', 'a@example.com\n'), '--engine', 'api'], { env: { XDG_CONFIG_HOME: dir } });
    expect(nokey.code).toBe(3);
    expect(nokey.stderr).toMatch(/^mailsift: no API key \(--engine api\): set MAILSIFT_API_KEY/);
    expect(nokey.stdout).toBe('');
  });
});

describe.skipIf(!existsSync('/dev/full'))('an output that cannot be written (a full disk)', () => {
  it('-o /dev/full: one line naming the output, exit 1, never success', async () => {
    const input = file('full.txt', 'a@example.com\nb@example.com\n');
    const r = await runInProcess(['validate', input, '--engine', 'local', '-q', '-o', '/dev/full']);
    expect(r.code).toBe(74); // issue 13: a full disk is no bug (it was 1)
    expect(r.stderr.trim()).toMatch(
      /^mailsift: cannot write \/dev\/full: ENOSPC \(no space left on the device\); make room or give another path, then run again$/,
    );
  });
});
