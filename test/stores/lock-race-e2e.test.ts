import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

/*
 * Issue 13: with a dead run's pid in FILE.lock, runs that start together must
 * not both take the lock over. Real processes race for real locks, many rounds
 * in a second: before the fix, two of them won in most runs of this test.
 * (races-e2e.test.ts does the same with the whole binary, fewer times.)
 */
const WORKER = fileURLToPath(new URL('../support/lock-worker.mjs', import.meta.url));
// src/stores/lock.ts as it is now, bundled for the workers (esbuild, a few tens of ms): the
// suite builds no tsc output, and a stale dist/ would test yesterday's lock
let LOCK_MODULE = process.env.MAILSIFT_LOCK_MODULE ?? '';
beforeAll(async () => {
  if (LOCK_MODULE !== '') return;
  LOCK_MODULE = join(await mkdtemp(join(tmpdir(), 'mailsift-lock-module-')), 'lock.mjs');
  await build({
    entryPoints: [fileURLToPath(new URL('../../src/stores/lock.ts', import.meta.url))],
    outfile: LOCK_MODULE,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20.18',
    logLevel: 'warning',
  });
});
afterAll(async () => {
  if (LOCK_MODULE.includes('mailsift-lock-module-')) await rm(dirname(LOCK_MODULE), { recursive: true, force: true });
});

interface Worker {
  child: ChildProcessWithoutNullStreams;
  ask(line: string): Promise<string>;
}

function startWorker(): Worker {
  const child = spawn(process.execPath, [WORKER, LOCK_MODULE], { stdio: ['pipe', 'pipe', 'pipe'] });
  const waiting: ((line: string) => void)[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => waiting.shift()?.(line));
  return {
    child,
    ask: (line) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no answer to ${line}`)), 10_000);
        waiting.push((answer) => {
          clearTimeout(timer);
          resolve(answer);
        });
        child.stdin.write(line + '\n');
      }),
  };
}

let dir: string;
let workers: Worker[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mailsift-lock-'));
});
afterEach(async () => {
  for (const w of workers) w.child.kill();
  workers = [];
  await rm(dir, { recursive: true, force: true });
});

describe('a stale journal lock, many runs at once', () => {
  it('is taken over by exactly one of them, round after round', async () => {
    const STARTERS = 8;
    const ROUNDS = 40;
    workers = Array.from({ length: STARTERS }, startWorker);
    for (let round = 0; round < ROUNDS; round++) {
      const journal = join(dir, `r${round}.journal`);
      await writeFile(`${journal}.lock`, '4194303\n'); // beyond any pid in use here: a run killed long ago
      const answers = await Promise.all(workers.map((w) => w.ask(`go ${journal}`)));
      const won = answers.filter((a) => a === 'won').length;
      expect(won, `round ${round}: ${answers.join(' | ')}`).toBe(1);
      for (const a of answers) if (a !== 'won') expect(a).toMatch(/^lost .*is in use by another mailsift run/);
      await Promise.all(workers.map((w) => w.ask('release')));
    }
  }, 30_000);
});
