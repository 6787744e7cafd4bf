// Issue 29, end to end through the real binary, where only a process shows it:
// stdin and stdout as the process's own descriptors (compared by inode), a FIFO
// that blocks the process (as input, as output, planted under a leftover's
// name), a signal that must end the run within seconds, and the leftovers of
// runs killed with -9, removed by the next run. The rest: no-loss.test.ts.
import { spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { seeded } from '../support/fault-server.js';
import { BIN, runCli, type CliResult } from '../support/run-cli.js';
import { missingTool } from '../support/tools.js';
import { runInProcess } from '../support/run-in-process.js';
import { waitFor } from '../support/wait.js';
import { contacts } from '../support/contacts.js';
import { excelParts, zip } from '../support/workbook.js';
import { caseDirectories, INPUT, LOCAL, rows } from './cases.js';

const root = mkdtempSync(join(tmpdir(), 'mailsift-noloss-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const dirWith = caseDirectories(root);

/** Runs a bash script in `cwd` with `$M` the binary: for the redirections a user types. Bounded. */
function bash(script: string, cwd: string, env: Record<string, string> = {}): CliResult {
  const r = spawnSync('bash', ['--norc', '--noprofile', '-c', script], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'], // a socket on stdin would make bash read ~/.bashrc
    env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', M: `${process.execPath} ${BIN}`, ...env },
    encoding: 'utf8',
    timeout: 60_000,
    killSignal: 'SIGKILL',
  });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

// the full-disk case mounts a tmpfs: root only (CI runs as root, and must run it)
const asRoot = !missingTool('root', process.getuid?.() !== 0 && 'not root: the full-disk case of no-loss-e2e mounts a tmpfs');

const temps = (dir: string): string[] => readdirSync(dir).filter((n) => n.endsWith('.mailsift-tmp'));

/** Whether `cond` comes to hold within `ms` (the caller's expect says what failed to happen). */
const until = (cond: () => boolean, ms = 30_000): Promise<boolean> =>
  waitFor(cond, { what: 'the run to reach its moment', timeoutMs: ms }).then(
    () => true,
    () => false,
  );

/** A run of the binary in the background, with how and when it ended. */
function background(args: string[], cwd: string, env: Record<string, string> = { PATH: process.env.PATH ?? '' }) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdout.resume();
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number; stderr: string }>((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, at: Date.now(), stderr });
    }),
  );
  return { child, done };
}

describe('stdin is the input: compared with every output and with stdout (1)', () => {
  it.each<[string, string, RegExp]>([
    [
      'validate - -o in.csv < in.csv',
      '$M validate - -o in.csv --engine local --no-dns -q < in.csv',
      /^mailsift: -o in\.csv is the file stdin reads: writing it would destroy the input; give -o another path\n$/,
    ],
    [
      'validate < in.csv >> in.csv',
      '$M validate --engine local --no-dns -q < in.csv >> in.csv',
      /^mailsift: stdout is the file stdin reads: the verdicts would be written into the input as it is read; redirect them to another file\n$/,
    ],
    [
      'validate - --summary in.csv < in.csv',
      '$M validate - --summary in.csv -o out.csv --engine local --no-dns -q < in.csv',
      /^mailsift: --summary in\.csv is the file stdin reads/,
    ],
  ])('%s: exit 2, one line, the input byte-identical, nothing written', (_name, script, why) => {
    const dir = dirWith({ 'in.csv': INPUT });
    const r = bash(script, dir);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(why);
    expect(readFileSync(join(dir, 'in.csv'), 'utf8')).toBe(INPUT);
    expect(readdirSync(dir)).toEqual(['in.csv']);
  });
});

describe.skipIf(!asRoot)('a full disk (2): --summary and --report are not committed cut short', () => {
  it('exit 74 naming the file; the older summary and report byte-identical; no temp file', () => {
    const dir = dirWith({ 'in.csv': INPUT });
    const disk = join(dir, 'disk');
    mkdirSync(disk);
    expect(bash(`mount -t tmpfs -o size=256k tmpfs disk`, dir).code).toBe(0);
    try {
      writeFileSync(join(disk, 's.json'), '{"total": 1}\n');
      writeFileSync(join(disk, 'r.html'), '<html>yesterday</html>\n');
      // fill what is left: the temp files can be created, but not one page written into them
      bash('dd if=/dev/zero of=disk/filler bs=4k 2>/dev/null; true', dir);
      const r = bash(`$M validate in.csv -o out.csv --summary disk/s.json --report disk/r.html ${LOCAL.join(' ')}`, dir);
      expect(r.code, r.stderr).toBe(74);
      expect(r.stderr).toMatch(/^mailsift: cannot write the (summary to disk\/s\.json|report to disk\/r\.html): ENOSPC \(no space left on the device\)/);
      expect(readFileSync(join(disk, 's.json'), 'utf8')).toBe('{"total": 1}\n');
      expect(readFileSync(join(disk, 'r.html'), 'utf8')).toBe('<html>yesterday</html>\n');
      expect(temps(disk)).toEqual([]);
    } finally {
      bash('umount disk', dir);
    }
  });
});

describe('the process’s own stdout and stderr are streams, written in place (3)', () => {
  it('-o /dev/stdout >> log.txt appends the rows: the log keeps its earlier content', () => {
    const dir = dirWith({ 'in.csv': INPUT, 'log.txt': 'an earlier line\n' });
    const r = bash(`$M validate in.csv -o /dev/stdout ${LOCAL.join(' ')} >> log.txt`, dir);
    expect(r.code, r.stderr).toBe(0);
    const log = readFileSync(join(dir, 'log.txt'), 'utf8').split('\n');
    expect(log.slice(0, 2)).toEqual(['an earlier line', expect.stringMatching(/^name,email,status,/)]);
    expect(log).toHaveLength(5);
    expect(temps(dir)).toEqual([]);
  });

  it('--summary /dev/stderr 2>> err.log appends the summary: the log keeps its earlier content', () => {
    const dir = dirWith({ 'in.csv': INPUT, 'err.log': 'an earlier error\n' });
    const r = bash(`$M validate in.csv -o out.csv --summary /dev/stderr ${LOCAL.join(' ')} 2>> err.log`, dir);
    expect(r.code).toBe(0);
    const log = readFileSync(join(dir, 'err.log'), 'utf8');
    expect(log.startsWith('an earlier error\n{\n')).toBe(true);
    expect(JSON.parse(log.slice('an earlier error\n'.length)).total).toBe(2);
  });
});

describe('what was checked is what is written (5)', { timeout: 90_000 }, () => {
  it('a link that appears at -o while the run waits for its input is refused: the journal it leads to is kept', async () => {
    const dir = dirWith({ 'in.txt': 'ann@example.com\nbob@example.com\n' });
    const first = await runInProcess(['validate', 'in.txt', '--journal', 'j.journal', '-o', 'first.csv', ...LOCAL], { cwd: dir });
    expect(first.code, first.stderr).toBe(0);
    const journal = readFileSync(join(dir, 'j.journal'));
    // The input is a FIFO: once our open for writing finds its reader, the run
    // has checked its paths and waits for the input.
    expect(spawnSync('mkfifo', [join(dir, 'feed.txt')]).status).toBe(0);
    const run = background(['validate', 'feed.txt', '--journal', 'j.journal', '-o', 'out.csv', ...LOCAL], dir);
    let fd = -1;
    expect(
      await until(() => {
        try {
          fd = openSync(join(dir, 'feed.txt'), constants.O_WRONLY | constants.O_NONBLOCK);
          return true;
        } catch {
          return false;
        }
      }),
    ).toBe(true);
    symlinkSync('j.journal', join(dir, 'out.csv'));
    writeSync(fd, 'ann@example.com\nbob@example.com\n');
    closeSync(fd);
    const r = await run.done;
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toBe('mailsift: -o out.csv and --journal j.journal are the same file (through a symbolic link); give each its own path\n');
    expect(readFileSync(join(dir, 'j.journal'))).toEqual(journal);
  });
});

describe('a FIFO output nobody reads (7): a signal ends the run within seconds', { timeout: 90_000 }, () => {
  /** what "within a few seconds" allows on a loaded machine */
  const BOUND_MS = 8000;
  const ended = (r: { code: number | null; signal: NodeJS.Signals | null }, sig: NodeJS.Signals): boolean =>
    r.code === (sig === 'SIGINT' ? 130 : 143) || r.signal === sig;

  it.each<NodeJS.Signals>(['SIGTERM', 'SIGINT'])('%s while it waits for a reader', async (sig) => {
    const dir = dirWith({ 'in.csv': INPUT });
    expect(spawnSync('mkfifo', [join(dir, 'p')]).status).toBe(0);
    const run = background(['validate', 'in.csv', '-o', 'p', '--journal', 'j', ...LOCAL], dir);
    // the journal is locked just before the outputs are opened
    expect(await until(() => existsSync(join(dir, 'j.lock')))).toBe(true);
    const sent = Date.now();
    run.child.kill(sig);
    const r = await run.done;
    expect(r.at - sent, r.stderr).toBeLessThan(BOUND_MS);
    expect(ended(r, sig), `${r.code} ${r.signal} ${r.stderr}`).toBe(true);
    expect(temps(dir)).toEqual([]);
  });
});

describe('temp files of killed runs (13)', () => {
  it('kill -9 at random moments, then one more run: no temp file of any earlier run is left', async () => {
    const dir = dirWith({ 'in.csv': rows(40_000) });
    const random = seeded(29);
    for (let i = 0; i < 5; i++) {
      const before = new Set(temps(dir));
      const run = background(['validate', 'in.csv', '-o', 'out.csv', ...LOCAL], dir);
      // some time after the run has begun writing its output
      if (await until(() => temps(dir).some((n) => !before.has(n)))) await sleep(Math.floor(random() * 300));
      run.child.kill('SIGKILL');
      await run.done;
    }
    expect(temps(dir).length, 'the kills left temp files behind').toBeGreaterThan(0);
    // the run after the kills needs no process of its own: it sweeps what dead ones left
    const last = await runInProcess(['validate', 'in.csv', '-o', 'out.csv', ...LOCAL], { cwd: dir, timeoutMs: 60_000 });
    expect(last.code, last.stderr).toBe(0);
    expect(temps(dir)).toEqual([]);
    expect(readFileSync(join(dir, 'out.csv'), 'utf8').split('\n')).toHaveLength(40_002);
  }, 120_000);

  it('a workbook piped on stdin: the copy a killed run left in the temp directory is removed by the next', async () => {
    const tmp = mkdtempSync(join(root, 'tmp-'));
    mkdirSync(join(tmp, 'mailsift-4194303-12345-AbC123')); // beyond any pid in use here: a run killed long ago
    writeFileSync(join(tmp, 'mailsift-4194303-12345-AbC123/input.xlsx'), 'a partial copy');
    const r = await runCli(['validate', '-', ...LOCAL], { stdin: zip(excelParts(contacts(3).cells)), env: { TMPDIR: tmp } });
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(tmp)).toEqual([]);
  });
});

describe('names of leftovers planted in a shared directory (/tmp)', () => {
  it('a FIFO under the name of a temp file or a half-made lock of a run in another PID namespace neither hangs the run nor is removed', async () => {
    const dir = dirWith({ 'in.csv': INPUT });
    // the names a run in another PID namespace gives them (fs/owner.ts): judged by the kernel lock on the file
    const planted = ['.out.csv.1-12345-4026530000-0123456789ab.mailsift-tmp', 'run.journal.lock.1-12345-4026530000-0123456789ab.new'];
    for (const name of planted) expect(spawnSync('mkfifo', [join(dir, name)]).status).toBe(0);
    const r = await runCli(['validate', 'in.csv', '-o', 'out.csv', '--journal', 'run.journal', ...LOCAL], { cwd: dir, timeoutMs: 20_000 });
    expect([r.code, r.signal], r.stderr).toEqual([0, null]);
    expect(readFileSync(join(dir, 'out.csv'), 'utf8').split('\n')).toHaveLength(4);
    expect(
      readdirSync(dir)
        .filter((n) => planted.includes(n))
        .sort(),
    ).toEqual([...planted].sort());
  });
});
