// The in-process runner itself (test/support/run-in-process.ts): `main(argv,
// io)` with buffers for stdin, stdout and stderr, no process started, the
// result shaped as runCli's. What only an io can state: a run in another
// directory (relative paths), a terminal of N columns, a Ctrl-C the test
// sends, a stdout that is no file descriptor. Commands' own cases run
// in-process in their files (validate.test.ts, usability.test.ts, …).
import { EventEmitter } from 'node:events';
import { existsSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
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

describe('a run in another directory', () => {
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

describe('what the io states', () => {
  it("-o /dev/stdout and --summary /dev/stderr name the run's own streams: here its buffers, not the test runner's", async () => {
    const r = await runInProcess(['validate', '-', '--engine', 'local', '--no-dns', '-o', '/dev/stdout', '--summary', '/dev/stderr', '-q'], {
      stdin: 'ann@example.com\nbob@example.com\nnot-an-address\n',
    });
    expect(r.code, r.stderr).toBe(0);
    expect(parseCsv(r.stdout).map((row) => [row[0], row[1]])).toEqual([
      ['email', 'status'],
      ['ann@example.com', 'valid'],
      ['bob@example.com', 'valid'],
      ['not-an-address', 'invalid'],
    ]);
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
