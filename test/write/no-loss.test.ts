// Issue 29, the command in-process: no run replaces, truncates or deletes a
// file it was not asked to write, on any path (lock files, a full disk, a link
// that appears during the run, bind mounts). What needs a process — stdin and
// stdout as the process's descriptors, a FIFO that blocks the process, a
// signal, kill -9 and what it leaves, the temp file of an output the disk
// could not hold, removed at exit — is in no-loss-e2e.test.ts.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import type { CliResult } from '../support/run-cli.js';
import { runInProcess } from '../support/run-in-process.js';
import { missingTool } from '../support/tools.js';
import { waitFor } from '../support/wait.js';
import { API_KEY, apiEnv } from '../stores/helpers.js';
import { caseDirectories, INPUT, LOCAL, rows } from './cases.js';

const root = mkdtempSync(join(tmpdir(), 'mailsift-noloss-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let server: FaultServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const dirWith = caseDirectories(root);

/** Runs a bash script in `cwd` (mount, dd, umount). Bounded. */
function bash(script: string, cwd: string): CliResult {
  const r = spawnSync('bash', ['--norc', '--noprofile', '-c', script], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'], // a socket on stdin would make bash read ~/.bashrc
    env: { PATH: process.env.PATH ?? '' },
    encoding: 'utf8',
    timeout: 60_000,
    killSignal: 'SIGKILL',
  });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

const temps = (dir: string): string[] => readdirSync(dir).filter((n) => n.endsWith('.mailsift-tmp'));

/** Whether `cond` comes to hold within `ms` (the caller's expect says what failed to happen). */
const until = (cond: () => boolean, ms = 30_000): Promise<boolean> =>
  waitFor(cond, { what: 'the run to reach its moment', timeoutMs: ms }).then(
    () => true,
    () => false,
  );

// the full-disk and bind-mount cases mount a tmpfs: root only (CI runs as root, and must run them)
const asRoot = !missingTool('root', process.getuid?.() !== 0 && 'not root: the full-disk and bind-mount cases of no-loss mount a tmpfs');

describe.skipIf(!asRoot)('the outputs of a run are one set: on a full disk none replaces its older file', () => {
  it('-o and --summary fit, --report does not: exit 74, all three older files byte-identical, no temp file', async () => {
    const dir = dirWith({ 'in.csv': INPUT });
    const disk = join(dir, 'disk');
    mkdirSync(disk);
    expect(bash(`mount -t tmpfs -o size=256k tmpfs disk`, dir).code).toBe(0);
    try {
      const older = { 'out.csv': 'the older rows\n', 's.json': '{"total": 1}\n', 'r.html': '<html>yesterday</html>\n' };
      for (const [name, text] of Object.entries(older)) writeFileSync(join(disk, name), text);
      // room for the new rows and the summary (a page each), not for the report
      bash('dd if=/dev/zero of=disk/slack bs=4k count=2 2>/dev/null; dd if=/dev/zero of=disk/filler bs=4k 2>/dev/null; rm disk/slack', dir);
      const r = await runInProcess(['validate', 'in.csv', '-o', 'disk/out.csv', '--summary', 'disk/s.json', '--report', 'disk/r.html', ...LOCAL], { cwd: dir });
      expect(r.code, r.stderr).toBe(74);
      expect(r.stderr).toMatch(/^mailsift: cannot write the report to disk\/r\.html: ENOSPC \(no space left on the device\)/);
      for (const [name, text] of Object.entries(older)) expect(readFileSync(join(disk, name), 'utf8'), name).toBe(text);
      expect(temps(disk)).toEqual([]);
    } finally {
      bash('umount disk', dir);
    }
  });
});

describe('lock files count as outputs (4)', () => {
  it.each([
    ['--journal', 'j'],
    ['--cache', 'c'],
  ])('%s %s, and an input named as its lock file: exit 2, the input kept', async (flag, path) => {
    const dir = dirWith({ [`${path}.lock`]: INPUT });
    const r = await runInProcess(['validate', `${path}.lock`, flag, path, '-o', 'out.csv', ...LOCAL], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `mailsift: ${flag}'s lock file ${path}.lock is the input file ${path}.lock: writing it would destroy the input; give ${flag} another path\n`,
    );
    expect(readFileSync(join(dir, `${path}.lock`), 'utf8')).toBe(INPUT);
  });
});

describe('what was checked is what is written (5)', () => {
  it('a link that appears at -o during the run is not written through: the input untouched, exit 2 with a clear line', async () => {
    server = await startFaultServer({ apiKey: API_KEY, delayMs: 200 });
    const dir = dirWith({ 'in.csv': rows(60) });
    const run = runInProcess(['validate', 'in.csv', '-o', 'out.csv', '--batch-size', '10', '--concurrency', '1'], { cwd: dir, env: apiEnv(server) });
    expect(await until(() => server!.requests.length >= 1)).toBe(true);
    symlinkSync('in.csv', join(dir, 'out.csv'));
    const r = await run;
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(
      /^mailsift: out\.csv changed during the run: it now leads to .*in\.csv, not to the file that was checked; nothing was written there\n$/,
    );
    expect(readFileSync(join(dir, 'in.csv'), 'utf8')).toBe(rows(60));
    expect(temps(dir)).toEqual([]);
  });
});

describe.skipIf(!asRoot)('bind mounts (6): one directory under two paths', () => {
  it('two new outputs in it are one file; an input reached through it is not called a hard link', async () => {
    const dir = dirWith({});
    mkdirSync(join(dir, 'a'));
    mkdirSync(join(dir, 'b'));
    writeFileSync(join(dir, 'a/in.csv'), INPUT);
    expect(bash('mount --bind a b', dir).code).toBe(0);
    try {
      const outputs = await runInProcess(['validate', 'a/in.csv', '-o', 'a/out.csv', '--summary', 'b/out.csv', ...LOCAL], { cwd: dir });
      expect(outputs.code).toBe(2);
      expect(outputs.stderr).toBe(
        'mailsift: -o a/out.csv and --summary b/out.csv are the same file (the same directory through another mount); give each its own path\n',
      );
      const input = await runInProcess(['validate', 'a/in.csv', '-o', 'b/in.csv', ...LOCAL], { cwd: dir });
      expect(input.code).toBe(2);
      expect(input.stderr).toBe(
        'mailsift: -o b/in.csv is the input file a/in.csv (the same directory through another mount): writing it would destroy the input; give -o another path\n',
      );
      expect(readdirSync(join(dir, 'a'))).toEqual(['in.csv']);
      expect(readFileSync(join(dir, 'a/in.csv'), 'utf8')).toBe(INPUT);
    } finally {
      bash('umount b', dir);
    }
  });
});

describe('smaller (14)', () => {
  it('--split into a new directory with --summary inside it', async () => {
    const dir = dirWith({ 'in.csv': INPUT });
    const r = await runInProcess(['validate', 'in.csv', '--split', 'fresh', '--summary', 'fresh/summary.json', ...LOCAL], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'fresh/summary.json'), 'utf8')).total).toBe(2);
    expect(readdirSync(join(dir, 'fresh')).sort()).toEqual(['invalid.csv', 'risky.csv', 'summary.json', 'unknown.csv', 'valid.csv']);
  });

  it('a run that fails before its first row puts nothing on stdout', async () => {
    const dir = dirWith({ 'one-line.txt': 'x'.repeat(2 * 1024 * 1024) });
    const r = await runInProcess(['validate', 'one-line.txt', ...LOCAL], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^mailsift: .*longer than 1 MB/);
    expect(r.stdout).toBe('');
  });
});
