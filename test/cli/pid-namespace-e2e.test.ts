import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { BIN, type CliResult } from '../support/run-cli.js';
import { missingTool } from '../support/tools.js';
import { waitFor } from '../support/wait.js';

// Runs in PID namespaces of their own (`unshare --pid --fork --mount-proc`), each
// pid 1 there, as in two containers sharing a folder: a run's identity holds
// across namespaces (owner.ts), so neither takes the other's temp file or
// journal for a dead run's; a dead run's leftovers are still removed.
const canUnshare = !missingTool(
  'root and unshare(1)',
  !(process.platform === 'linux' && process.getuid?.() === 0 && spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0) &&
    'pid-namespace-e2e makes PID namespaces (root, util-linux)',
);

const KEY = 'sk_test_namespaces';
const ROWS = 400;
let dir: string;
let api: FaultServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mailsift-pidns-'));
  mkdirSync(join(dir, 'out'));
  writeFileSync(join(dir, 'in.txt'), Array.from({ length: ROWS }, (_, i) => `user${i}@example.com`).join('\n') + '\n');
  writeFileSync(join(dir, 'small.txt'), 'a@example.com\n');
  // 20 rows a request, one at a time, 100 ms each: a run lasts two seconds
  api = await startFaultServer({ apiKey: KEY, delayMs: 100 });
});
afterAll(async () => {
  await api?.close();
  await rm(dir, { recursive: true, force: true });
});

/** The binary as pid 1 of a PID namespace of its own; SIGKILL to the handle kills it (--kill-child). */
function inNamespace(args: string[]) {
  const env = { PATH: process.env.PATH ?? '', NO_COLOR: '1', MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: api.url };
  const child = spawn('unshare', ['--pid', '--fork', '--mount-proc', '--kill-child', process.execPath, BIN, ...args], {
    cwd: dir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const done = new Promise<CliResult>((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, stdout, stderr });
    }),
  );
  return { child, done };
}

const until = (cond: () => boolean): Promise<unknown> => waitFor(cond, { what: 'a run in its namespace to reach its moment', timeoutMs: 20_000 });

const temps = (): string[] => readdirSync(join(dir, 'out')).filter((n) => n.endsWith('.mailsift-tmp'));
const SLOW = ['--batch-size', '20', '--concurrency', '1'];

describe.skipIf(!canUnshare)('two runs, each pid 1 in a PID namespace of its own, one folder', { timeout: 90_000 }, () => {
  it("the second run leaves the first one's temp file alone: both outputs complete", async () => {
    const a = inNamespace(['validate', 'in.txt', '-o', 'out/a.csv', ...SLOW]);
    await until(() => temps().length === 1 || a.child.exitCode !== null);
    const b = inNamespace(['validate', 'small.txt', '-o', 'out/b.csv', '--engine', 'local', '--no-dns', '-q']);
    const rb = await b.done;
    expect(rb.code, rb.stderr).toBe(0);
    const ra = await a.done;
    expect(ra.code, ra.stderr).toBe(0);
    expect(
      readFileSync(join(dir, 'out', 'a.csv'), 'utf8')
        .trimEnd()
        .split('\n'),
    ).toHaveLength(ROWS + 1);
  });

  it('the second run is refused the journal the first one holds: nothing paid twice', async () => {
    const from = api.requests.length;
    const a = inNamespace(['validate', 'in.txt', '-o', 'out/c.csv', '--journal', 'out/run.journal', ...SLOW]);
    await until(() => existsSync(join(dir, 'out', 'run.journal.lock')) || a.child.exitCode !== null);
    const b = inNamespace(['validate', 'in.txt', '-o', 'out/d.csv', '--journal', 'out/run.journal', ...SLOW]);
    const rb = await b.done;
    expect(rb.code).toBe(2);
    expect(rb.stderr).toBe(
      'mailsift: --journal out/run.journal is in use by another mailsift run (pid 1 in another PID namespace); wait for it, or give another --journal path\n',
    );
    const ra = await a.done;
    expect(ra.code, ra.stderr).toBe(0);
    const sent = api.requests.slice(from).flatMap((r) => r.emails);
    expect(sent).toHaveLength(ROWS);
    expect(new Set(sent).size).toBe(ROWS);
  });

  it("a killed run's temp file and journal lock are taken for what they are: removed, taken over", async () => {
    const a = inNamespace(['validate', 'in.txt', '-o', 'out/e.csv', '--journal', 'out/dead.journal', ...SLOW]);
    await until(() => temps().length === 1 || a.child.exitCode !== null);
    await until(() => existsSync(join(dir, 'out', 'dead.journal.lock')));
    a.child.kill('SIGKILL'); // unshare --kill-child: the run dies of SIGKILL too
    await a.done;
    const [left] = temps();
    expect(left).toBeDefined();
    // its owner locked it just after creating it: a file this old without the lock is abandoned
    const old = new Date(Date.now() - 60_000);
    utimesSync(join(dir, 'out', left!), old, old);
    const b = inNamespace(['validate', 'in.txt', '-o', 'out/e.csv', '--journal', 'out/dead.journal', ...SLOW]);
    const rb = await b.done;
    expect(rb.code, rb.stderr).toBe(0);
    expect(temps()).toEqual([]);
    expect(existsSync(join(dir, 'out', 'dead.journal.lock'))).toBe(false);
  });
});
