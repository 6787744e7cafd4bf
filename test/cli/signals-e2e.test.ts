import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { runAndSignal } from '../stores/helpers.js';

// Every signal whose default action ends the process gets SIGTERM's clean-up;
// SIGUSR1 does not open Node's inspector in a process that holds the API key.
// (That each leaves every answer in the journal and a resume pays for none
// again: test/stores/resume-e2e.test.ts.)
const KEY = 'sk_test_signals_7c1e';
const ROWS = 3000;
let dir: string;
let api: FaultServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mailsift-signals-'));
  writeFileSync(join(dir, 'in.txt'), Array.from({ length: ROWS }, (_, i) => `user${i}@example.com`).join('\n') + '\n');
  api = await startFaultServer({ apiKey: KEY, delayMs: 60 });
});
afterAll(async () => {
  await api.close();
  await rm(dir, { recursive: true, force: true });
});

const env = (): Record<string, string> => ({ PATH: process.env.PATH ?? '', MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: api.url });
const ARGS = ['validate', 'in.txt', '-o', 'out.csv', '--batch-size', '20', '--concurrency', '2'];

describe('signals', () => {
  it.each([
    ['SIGHUP', 129],
    ['SIGQUIT', 131],
    ['SIGUSR2', 140],
    ['SIGALRM', 142],
  ] as const)('%s mid-run: exit %d, the older output kept, no temp file left', async (sig, code) => {
    writeFileSync(join(dir, 'out.csv'), 'the older output\n');
    const from = api.requests.length;
    const r = await runAndSignal(ARGS, env(), () => api.requests.length >= from + 3, sig, 10, dir);
    expect(r.signalled).toBe(true);
    expect([r.code, r.signal], r.stderr).toEqual([code, null]);
    expect(r.stderr).toContain(`terminated (${sig}): sending nothing more`);
    expect(readFileSync(join(dir, 'out.csv'), 'utf8')).toBe('the older output\n');
    expect(readdirSync(dir).filter((name) => name.endsWith('.mailsift-tmp'))).toEqual([]);
  });

  it('SIGUSR1 opens no inspector: the run ignores it and finishes', async () => {
    const from = api.requests.length;
    // batches of 100: the signal still lands mid-run (after 3 of 30 requests), and the run then finishes in a second, not five
    const args = ARGS.map((a, i) => (ARGS[i - 1] === '--batch-size' ? '100' : a));
    const r = await runAndSignal(args, env(), () => api.requests.length >= from + 3, 'SIGUSR1', 10, dir);
    expect(r.signalled).toBe(true);
    expect(r.stderr).not.toMatch(/Debugger|inspector/i);
    expect([r.code, r.signal], r.stderr).toEqual([0, null]);
    expect(readFileSync(join(dir, 'out.csv'), 'utf8').split('\n')).toHaveLength(ROWS + 2);
  });
});
