import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { runInProcess } from '../support/run-in-process.js';
import { API_KEY, apiEnv, readJournal, sentEmails } from './helpers.js';

// Resuming a job with --journal when no signal is involved: the journal's work, run in-process.
// What a signal does to a run (and the re-run after it) is in resume-e2e.test.ts.

let dir: string;
let server: FaultServer;

afterEach(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('resume with --journal', () => {
  it('records no verdict for a row that got none: the re-run retries it and nothing else', async () => {
    let omit = true;
    dir = await mkdtemp(join(tmpdir(), 'mailsift-resume-'));
    server = await startFaultServer({ apiKey: API_KEY, omit: (email) => omit && email === 'lost@example.com' });
    await writeFile(join(dir, 'in.txt'), 'a@example.com\nlost@example.com\nb@example.com\n');
    const args = ['validate', 'in.txt', '-o', 'out.csv', '--retries', '1', '--journal', 'run.journal'];
    const r1 = await runInProcess(args, { cwd: dir, env: apiEnv(server) });
    expect(r1.code, r1.stderr).toBe(4);
    expect((await readJournal(join(dir, 'run.journal'))).emails.sort()).toEqual(['a@example.com', 'b@example.com']);

    omit = false;
    const before = server.requests.length;
    const r2 = await runInProcess(args, { cwd: dir, env: apiEnv(server) });
    expect(r2.code, r2.stderr).toBe(0);
    expect(sentEmails(server, before)).toEqual(['lost@example.com']);
    expect(await readFile(join(dir, 'out.csv'), 'utf8')).toMatch(/^lost@example\.com,valid,/m);
  });

  it('refuses a journal of another job with exit 2 and one line, creating no output', async () => {
    dir = await mkdtemp(join(tmpdir(), 'mailsift-resume-'));
    await writeFile(join(dir, 'in.csv'), 'id,email\n1,a@example.com\n2,b@example.org\n');
    server = await startFaultServer({ apiKey: API_KEY, delayMs: 80, shuffle: true, seed: 41 });
    const args = ['validate', 'in.csv', '-o', 'out.csv', '--batch-size', '20', '--concurrency', '3', '--summary', 's.json', '--journal', 'run.journal'];
    // --no-dns: this machine may have no DNS, and DNS that fails the run is exit 4
    const r1 = await runInProcess([...args, '--engine', 'local', '--no-dns'], { cwd: dir, env: apiEnv(server) });
    expect(r1.code, r1.stderr).toBe(0);
    await rm(join(dir, 'out.csv'));
    const r2 = await runInProcess(args, { cwd: dir, env: apiEnv(server) });
    expect(r2.code).toBe(2);
    expect(r2.stderr).toMatch(/^mailsift: --journal run\.journal belongs to another job: .*--engine local.*delete run\.journal to start over\n$/);
    expect(existsSync(join(dir, 'out.csv'))).toBe(false);
    expect(server.requests).toHaveLength(0);
  });
});
