// Commands run in-process (test/support/run-in-process.ts): `main(argv, io)`
// with buffers for stdin, stdout and stderr, no process started. Cases from
// usability-e2e and validate-e2e, re-expressed: the same arguments, the same
// assertions, the same result shape as runCli's; and what only an io can
// state — a terminal of N columns, a Ctrl-C the test sends, a stdout that is
// no file descriptor.
import { EventEmitter } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer, type FaultServerOptions } from '../support/fault-server.js';
import { parseCsv } from '../support/run-cli.js';
import { runInProcess } from '../support/run-in-process.js';
import { waitFor } from '../support/wait.js';

const KEY = 'sk_test_SECRET_4f9d2c';
const dir = mkdtempSync(join(tmpdir(), 'mailsift-in-process-'));
const file = (name: string, content: string | Buffer): string => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

let server: FaultServer | undefined;
async function serverWith(options: FaultServerOptions = {}): Promise<FaultServer> {
  server = await startFaultServer({ apiKey: KEY, ...options });
  return server;
}
afterEach(async () => {
  await server?.close();
  server = undefined;
});
const api = (): Record<string, string> => ({ MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: server!.url });
const sentAddresses = (): string[] => server!.requests.filter((r) => r.path === '/api/validate/bulk').flatMap((r) => r.emails);

describe('keys (usability-e2e)', () => {
  it('list shows ids and hints, never a whole key; revoke removes one by id and keeps the rest', async () => {
    // a relative path, in the run's own directory
    const cwd = mkdtempSync(join(dir, 'keys-'));
    writeFileSync(join(cwd, 'keys.txt'), '# team keys\n', { mode: 0o600 });
    const a = (await runInProcess(['keys', 'create', '--keys-file', 'keys.txt'], { cwd })).stdout.trim();
    const b = (await runInProcess(['keys', 'create', '--keys-file', 'keys.txt'], { cwd })).stdout.trim();

    const list = await runInProcess(['keys', 'list', '--keys-file', 'keys.txt'], { cwd });
    expect(list.code).toBe(0);
    const lines = list.stdout.trim().split('\n');
    expect(lines).toEqual([`${lines[0]!.slice(0, 12)}  msk_…${a.slice(-4)}`, `${lines[1]!.slice(0, 12)}  msk_…${b.slice(-4)}`]);
    expect(list.stdout).not.toContain(a);

    const id = lines[0]!.slice(0, 8);
    const revoke = await runInProcess(['keys', 'revoke', id, '--keys-file', 'keys.txt'], { cwd });
    expect(revoke.code, revoke.stderr).toBe(0);
    expect(revoke.stderr).toMatch(/^mailsift: key [0-9a-f]{12} revoked; 1 key left in keys\.txt .*restart a running mailsift serve/);
    expect(revoke.file('keys.txt')).toBe(`# team keys\n${b}\n`);
    expect(statSync(join(cwd, 'keys.txt')).mode & 0o777).toBe(0o600);

    const again = await runInProcess(['keys', 'revoke', id, '--keys-file', 'keys.txt'], { cwd });
    expect([again.code, again.stderr]).toEqual([2, `mailsift: keys revoke: no key with id ${id} in keys.txt\n`]);
    const bad = await runInProcess(['keys', 'revoke', a, '--keys-file', 'keys.txt'], { cwd }); // a whole key is not an id, and is not echoed
    expect(bad.code).toBe(2);
    expect(bad.stderr).not.toContain(a.slice(4));
  });
});

describe('messages (usability-e2e)', () => {
  it('every error line starts with "mailsift:", commander\'s included', async () => {
    for (const args of [['validate', '--bogus'], ['validate', '--batch-size', '0'], ['nope'], ['completion', 'tcsh']]) {
      const r = await runInProcess(args);
      expect(r.code).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(/^mailsift: /);
      expect(r.stderr).not.toMatch(/^error:/m);
    }
  });

  it('a key given as a flag is refused with where keys go, never echoed; a TTL without its unit asks for one', async () => {
    const key = 'sk_live_9f8e7d6c5b4a3f2e1d0c';
    const r = await runInProcess(['validate', '-', '--api-key', key], { stdin: 'a@example.com\n' });
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toBe('mailsift: --api-key: keys never go in flags (ps and shell history show them); set MAILSIFT_API_KEY, pass --api-key-file FILE or run "mailsift login"\n');
    const ttl = await runInProcess(['validate', '-', '--cache', join(dir, 'ttl.cache'), '--cache-ttl', '30'], { stdin: 'a@example.com\n' });
    expect([ttl.code, ttl.stdout]).toEqual([2, '']);
    expect(ttl.stderr).toMatch(/^mailsift: option '--cache-ttl <duration>' argument '30' is invalid\. a number alone is ambiguous: add a unit, e\.g\. 30d/);
    expect(readdirSync(dir)).not.toContain('ttl.cache');
  });

  it('--help and --version go to stdout, exit 0', async () => {
    const help = await runInProcess(['validate', '--help']);
    expect([help.code, help.stderr]).toEqual([0, '']);
    expect(help.stdout).toMatch(/^Usage: mailsift validate \[options\] \[input\]/);
    expect((await runInProcess(['--version'])).stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});

describe('completion (usability-e2e)', () => {
  it('zsh and fish scripts come from the same table', async () => {
    const zsh = (await runInProcess(['completion', 'zsh'])).stdout;
    expect(zsh).toMatch(/^#compdef mailsift\n/);
    expect(zsh).toContain('bashcompinit');
    const fish = (await runInProcess(['completion', 'fish'])).stdout;
    expect(fish).toContain("complete -c mailsift -n '__fish_seen_subcommand_from validate' -l journal -r -F");
    expect(fish).toContain("complete -c mailsift -n '__fish_seen_subcommand_from keys; and not __fish_seen_subcommand_from create list revoke' -a list");
    expect(fish).toContain("-l engine -x -a 'api local offline'");
  });
});

describe('validate against the API (validate-e2e)', () => {
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
    expect(rows.slice(1).map((row) => row.slice(0, 4))).toEqual([
      ['1', 'Smith, Jane', 'line one\nline two', 'jane@example.com'],
      ['2', 'Zoë Ångström', 'says "hi"', 'invalid.zoe@example.org'],
      ['3', '李雷', '', 'risky.lei@example.cn'],
    ]);
    expect(rows.slice(1).map((row) => row[4])).toEqual(['valid', 'invalid', 'risky']);
    expect(rows.slice(1).map((row) => row[5])).toEqual(['', 'no_mail_server', 'role']);
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

  it('asks again for an address the response left out, then reports MISSING_RESULT with exit 4', async () => {
    await serverWith({ omit: (email, attempt) => email.startsWith('gone') || (email.startsWith('late') && attempt === 1) });
    const cwd = mkdtempSync(join(dir, 'missing-'));
    writeFileSync(join(cwd, 'missing.txt'), 'a@example.com\ngone@example.com\nlate@example.com\n');
    const r = await runInProcess(['validate', 'missing.txt', '--summary', 'summary.json'], { env: api(), cwd });
    expect(r.code).toBe(4);
    const rows = parseCsv(r.stdout).slice(1);
    expect(rows.map((row) => [row[0], row[1], row[2], row[15]])).toEqual([
      ['a@example.com', 'valid', '', ''],
      ['gone@example.com', 'unknown', 'api_error', 'MISSING_RESULT'],
      ['late@example.com', 'valid', '', ''],
    ]);
    expect(sentAddresses().filter((e) => e === 'gone@example.com')).toHaveLength(2);
    expect(JSON.parse(r.file('summary.json'))).toMatchObject({ total: 3, errors: 1, unknown: 1 });
  });

  it('stops at once with exit 3 when the key is refused, and never shows the key', async () => {
    await serverWith({ apiKey: 'another-key' });
    const emails = Array.from({ length: 50 }, (_, i) => `u${i}@example.com`).join('\n');
    const r = await runInProcess(['validate', file('auth.txt', emails), '--batch-size', '5'], { env: api() });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/refused the key/);
    expect(server!.requests.length).toBeLessThanOrEqual(4);
    for (const text of [r.stdout, r.stderr]) expect(text).not.toContain(KEY);
  });
});

describe('what the io states', () => {
  it('-o /dev/stdout and --summary /dev/stderr name the run\'s own streams: here its buffers, not the test runner\'s', async () => {
    const r = await runInProcess(['validate', '-', '--engine', 'local', '--no-dns', '-o', '/dev/stdout', '--summary', '/dev/stderr', '-q'], {
      stdin: 'ann@example.com\nbob@example.com\nnot-an-address\n',
    });
    expect(r.code, r.stderr).toBe(0);
    expect(parseCsv(r.stdout).map((row) => [row[0], row[1]])).toEqual([['email', 'status'], ['ann@example.com', 'valid'], ['bob@example.com', 'valid'], ['not-an-address', 'invalid']]);
    expect(JSON.parse(r.stderr)).toMatchObject({ total: 3, invalid: 1 });
  });

  it('check aligns its lines on a terminal, and writes plain "key: value" lines elsewhere', async () => {
    const args = ['check', 'ann@example.com', '--engine', 'local', '--no-dns'];
    const piped = await runInProcess(args);
    expect(piped.stdout).toMatch(/^email: ann@example\.com\nstatus: valid\n/);
    const tty = await runInProcess(args, { terminal: { columns: 80 } });
    expect(tty.stdout).toMatch(/^email:      ann@example\.com\nstatus:     valid\n/);
  });

  it('a Ctrl-C the test sends: nothing more is sent, the rows answered are written, exit 130', async () => {
    await serverWith({ delayMs: 200 });
    const signals = new EventEmitter();
    const emails = Array.from({ length: 200 }, (_, i) => `u${i}@example.com`).join('\n');
    const running = runInProcess(['validate', file('interrupted.txt', emails), '--batch-size', '10', '--concurrency', '1'], { env: api(), signals });
    await waitFor(() => server!.requests.length > 0, { what: 'the first request to reach the API' });
    signals.emit('SIGINT');
    const r = await running;
    expect(r.code).toBe(130);
    expect(r.stderr).toMatch(/^mailsift: interrupted: sending nothing more; waiting up to 5s for requests in flight/m);
    expect(r.stderr).toMatch(/stopped early; addresses answered so far will be paid for again on a re-run/);
    const rows = parseCsv(r.stdout).slice(1);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.length).toBeLessThan(200);
    expect(rows.length).toBe(sentAddresses().length);
    // nothing of it leaked onto the process: no listener left behind
    expect(signals.listenerCount('SIGINT')).toBe(0);
    expect(existsSync(join(dir, 'interrupted.txt'))).toBe(true);
  });
});
