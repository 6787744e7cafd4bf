import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jobBinding } from '../../src/stores/binding.js';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { BIN, type CliResult } from '../support/run-cli.js';
import { runInProcess } from '../support/run-in-process.js';
import { waitFor } from '../support/wait.js';
import { API_KEY, apiEnv, countDuplicates, sentEmails } from './helpers.js';

/*
 * The promises "nothing paid twice, nothing lost" under races between runs of
 * the real binary (issue 13). Each race is tried a bounded number of times;
 * the cache race and the collision failed every time before the fix, the lock
 * race in some runs (see lock-race-e2e.test.ts for the reliable one).
 */

let dir: string;
let server: FaultServer;
afterEach(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

/**
 * A held-back run: its input is a FIFO, so it waits (before opening any store)
 * until `go`. `ready()` polls for the run having opened its input: our open
 * for writing succeeds once the FIFO has its reader.
 */
interface Gated {
  pid: number;
  ready(): Promise<void>;
  go(): void;
  done: Promise<CliResult>;
}

function gated(args: string[], input: string, cwd: string, name: string): Gated {
  const fifo = join(cwd, name);
  execFileSync('mkfifo', [fifo]);
  const env = { ...apiEnv(server) };
  const child = spawn(process.execPath, [BIN, ...args.map((a) => (a === 'INPUT' ? name : a))], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 100_000);
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
  let fd: number | undefined;
  return {
    pid: child.pid!,
    async ready() {
      const opened = await until(() => {
        try {
          fd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK); // ENXIO until the run opens its end
          return true;
        } catch {
          return child.exitCode !== null; // ended early: `done` tells why
        }
      });
      expect(opened, `${name}: the run never opened its input`).toBe(true);
    },
    go() {
      if (fd === undefined) return;
      // the inputs here are a few kilobytes: the pipe holds them whole
      writeSync(fd, input);
      closeSync(fd);
    },
    done,
  };
}

/** Whether `cond` comes to hold within `ms` (the caller's expect says what failed to happen). */
const until = (cond: () => boolean, ms = 60_000): Promise<boolean> =>
  waitFor(cond, { what: 'a race to reach its moment', timeoutMs: ms }).then(
    () => true,
    () => false,
  );

/** Every address in a journal or cache file (the cache's lines start with a timestamp). */
async function storedEmails(path: string): Promise<string[]> {
  const lines = (await readFile(path, 'utf8')).split('\n').slice(1).filter(Boolean);
  return lines.map((l) => {
    const entry = JSON.parse(l) as unknown[];
    return (typeof entry[0] === 'number' ? entry[1] : entry[0]) as string;
  });
}

const list = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}@example.com`);

describe('a stale journal lock taken over by many runs at once', () => {
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mailsift-race-'));
    // slow answers: the run that wins the lock is still running when the others try it
    server = await startFaultServer({ apiKey: API_KEY, delayMs: 600 });
  });

  // The whole binary, a few times (lock-race-e2e.test.ts races the lock itself many times, and fails reliably on the old lock).
  it('lets exactly one in; the others exit 2 and nothing is paid twice', async () => {
    // once: six processes of 0.3 s of CPU each; lock-race-e2e.test.ts repeats the race on the lock itself
    const TRIALS = 1;
    const STARTERS = 6;
    const input = list('lock', 20).join('\n') + '\n';
    for (let trial = 0; trial < TRIALS; trial++) {
      const journal = join(dir, `t${trial}.journal`);
      await writeFile(`${journal}.lock`, '4194303\n'); // beyond any pid in use here: a run killed long ago
      const before = server.requests.length;
      const runs = Array.from({ length: STARTERS }, (_, i) =>
        gated(['validate', 'INPUT', '-o', `t${trial}-${i}.csv`, '--journal', journal], input, dir, `t${trial}-${i}.txt`),
      );
      // every starter is up and waiting for its input: then they race for the lock
      for (const r of runs) await r.ready();
      for (const r of runs) r.go();
      const results = await Promise.all(runs.map((r) => r.done));
      const won = results.filter((r) => r.code === 0);
      const lost = results.filter((r) => r.code === 2);
      expect(won.length, `trial ${trial}: ${won.length} runs took the lock`).toBe(1);
      expect(lost.length).toBe(STARTERS - 1);
      for (const r of lost) expect(r.stderr).toMatch(/is in use by another mailsift run/);
      const sent = sentEmails(server, before);
      expect(countDuplicates(sent)).toEqual([]);
      expect(countDuplicates(await storedEmails(journal))).toEqual([]);
    }
  }, 120_000);
});

describe('runs sharing a cache that is mostly stale', () => {
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mailsift-race-'));
    server = await startFaultServer({ apiKey: API_KEY });
  });

  it('keeps every run’s verdicts when one of them would compact the file', async () => {
    // once: the lost verdicts showed on every try before the fix
    const TRIALS = 1;
    const header = { mailsift: 'cache', version: 1, ...jobBinding({ engine: 'api', baseUrl: server.url }) };
    // Long expired lines, enough that loading and compacting the file takes a while.
    let stale = JSON.stringify(header) + '\n';
    for (let i = 0; i < 60_000; i++) stale += `[1000000000,"stale${i}@example.com","v11100-",0.9,"old",1]\n`;
    for (let trial = 0; trial < TRIALS; trial++) {
      const cache = join(dir, `t${trial}.cache`);
      await writeFile(cache, stale);
      const a = list(`a${trial}-`, 300);
      const b = list(`b${trial}-`, 300);
      const first = gated(['validate', 'INPUT', '-o', `a${trial}.csv`, '--cache', cache], a.join('\n') + '\n', dir, `a${trial}.txt`);
      const second = gated(['validate', 'INPUT', '-o', `b${trial}.csv`, '--cache', cache], b.join('\n') + '\n', dir, `b${trial}.txt`);
      await first.ready();
      await second.ready();
      first.go();
      // The second starts while the first is reading the cache: it holds the
      // cache's lock from before loading the file until after compacting it.
      const lock = `${cache}.lock`;
      // the owner's pid, first in the lock file (owner.ts)
      const holder = (): string | undefined => (existsSync(lock) ? readFileSync(lock, 'utf8').trim().split('-')[0] : undefined);
      expect(await until(() => holder() === String(first.pid)), 'the first run never took the cache lock').toBe(true);
      second.go();
      // the interleaving happened: the second had its input while the first still held the cache
      expect(holder(), 'the first run let go of the cache before the second started').toBe(String(first.pid));
      const [ra, rb] = await Promise.all([first.done, second.done]);
      expect(ra.code, ra.stderr).toBe(0);
      expect(rb.code, rb.stderr).toBe(0);
      const kept = new Set(await storedEmails(cache));
      const lost = [...a, ...b].filter((e) => !kept.has(e));
      expect(lost.length, `trial ${trial}: verdicts lost from the cache`).toBe(0);
    }
  }, 120_000);
});

describe('two addresses whose hashes collide', () => {
  // Found against the 64-bit hash that deduplication used to trust (about 125,000 tries).
  const pair = ['NWBQ0UJH\u5000\u4e00x@example.com', 'YfVuEFYd\u5c0f\u5f7dx@example.com'];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mailsift-race-'));
    server = await startFaultServer({
      apiKey: API_KEY,
      verdictFor: (email) => ({ status: email.startsWith('N') ? 'valid' : 'invalid' }),
    });
  });

  it('are two rows, each sent and answered for itself, through a run and a resumed journal', async () => {
    await writeFile(join(dir, 'in.txt'), pair.join('\n') + '\n');
    await writeFile(join(dir, 'one.txt'), pair[0] + '\n');
    const r = await runInProcess(['validate', 'in.txt', '--summary', 's.json', '--format', 'ndjson'], { cwd: dir, env: apiEnv(server) });
    expect(r.code, r.stderr).toBe(0);
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { email: string; status: string });
    expect(rows.map((x) => [x.email, x.status])).toEqual([
      [pair[0], 'valid'],
      [pair[1], 'invalid'],
    ]);
    expect(JSON.parse(await readFile(join(dir, 's.json'), 'utf8')).duplicates).toBe(0);
    expect(sentEmails(server).sort()).toEqual([...pair].sort());

    // A journal holding the first only must not answer for the second.
    const first = await runInProcess(['validate', 'one.txt', '--journal', 'j.journal', '-o', 'one.csv'], { cwd: dir, env: apiEnv(server) });
    expect(first.code, first.stderr).toBe(0);
    const before = server.requests.length;
    const resumed = await runInProcess(['validate', 'in.txt', '--journal', 'j.journal', '--format', 'ndjson'], { cwd: dir, env: apiEnv(server) });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(sentEmails(server, before)).toEqual([pair[1]]);
    expect(
      resumed.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { status: string }).status),
    ).toEqual(['valid', 'invalid']);
  });
});

describe('outputs proven writable before the first request', () => {
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mailsift-race-'));
    server = await startFaultServer({ apiKey: API_KEY });
  });

  it('an unwritable --summary is refused with exit 2 before anything is paid, and leaves no output behind', async () => {
    await writeFile(join(dir, 'in.txt'), list('s', 5).join('\n') + '\n');
    const r = await runInProcess(['validate', 'in.txt', '-o', 'out.csv', '--summary', 'no/such/dir/s.json'], { cwd: dir, env: apiEnv(server) });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^mailsift: cannot write the summary to no\/such\/dir\/s\.json: .*ENOENT.*\n$/);
    expect(server.requests).toHaveLength(0);
    const ok = await runInProcess(['validate', 'in.txt', '-o', 'out.csv', '--summary', 's.json'], { cwd: dir, env: apiEnv(server) });
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(await readFile(join(dir, 's.json'), 'utf8')).total).toBe(5);
  });
});
