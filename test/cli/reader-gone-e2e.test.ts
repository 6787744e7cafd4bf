import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { BIN } from '../support/run-cli.js';
import { runInProcess } from '../support/run-in-process.js';

// `mailsift validate big.txt --format ndjson | head -1`: once the reader has
// gone, nothing more is paid for; what was in flight reaches the journal.
const KEY = 'sk_test_reader_gone';
const dir = mkdtempSync(join(tmpdir(), 'mailsift-reader-gone-'));
const big = join(dir, 'big.txt');
const ROWS = 50_000;

describe('the reader of stdout leaves', () => {
  let api: FaultServer;
  let delayMs = 500;
  beforeAll(async () => {
    writeFileSync(big, Array.from({ length: ROWS }, (_, i) => `user${i}@example.com`).join('\n') + '\n');
    // a bulk answer takes half a second, as a real API's may: batches queue up behind the ones in flight
    api = await startFaultServer({ apiKey: KEY, delayMs: () => delayMs });
  });
  afterAll(() => api.close());

  it('| head -1: no request starts after head exits; in-flight answers are journaled and never sent again', async () => {
    const journal = join(dir, 'big.journal');
    const closed = join(dir, 'closed-at');
    // The shell's own pipe, as a user's. The reader takes one line and leaves a moment later, while
    // the requests sent at the first answer are still in the server (answers take 500 ms): a request
    // that starts after `date` noted the close was sent by a run that had seen its reader go.
    // (A close in the very turn of the event loop that sends a request cannot be seen before it.)
    const script =
      `"${process.execPath}" "${BIN}" validate "${big}" --format ndjson --journal "${journal}"` +
      ` | { head -1; sleep 0.2; exec 0<&-; date +%s%3N > "${closed}"; }`;
    const sh = spawn('sh', ['-c', script], { env: { PATH: process.env.PATH ?? '', MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: api.url } });
    let stdout = '';
    let stderr = '';
    sh.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    sh.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => sh.on('close', resolve));
    expect(code).toBe(0);
    expect(JSON.parse(stdout.trim()).email).toBe('user0@example.com');
    expect(stderr).not.toMatch(/EPIPE|Error|at /);

    const closedAt = Number(readFileSync(closed, 'utf8'));
    const bulk = api.requests.filter((r) => r.path === '/api/validate/bulk');
    const late = bulk.filter((r) => r.startedAt > closedAt);
    expect(late.map((r) => r.emails.length)).toEqual([]);
    const paid = bulk.filter((r) => r.status === 200).flatMap((r) => r.emails);
    expect(paid.length).toBeLessThan(ROWS);

    // everything the server answered is in the journal: a resume sends none of it again
    const before = api.requests.length;
    // in-process, and answered at once: what is resumed is the journal's work, not the pipe's, and
    // the rest of the 50,000 rows took five seconds of half-second answers
    delayMs = 0;
    const resumed = await runInProcess(['validate', big, '--format', 'ndjson', '--journal', journal, '-o', join(dir, 'all.ndjson')], {
      env: { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: api.url },
    }).finally(() => (delayMs = 500));
    expect(resumed.code, resumed.stderr).toBe(0);
    const again = new Set(api.requests.slice(before).flatMap((r) => r.emails));
    expect(paid.filter((e) => again.has(e))).toEqual([]);
    expect(again.size + new Set(paid).size).toBe(ROWS);
  }, 60_000);

  it.each([
    ['--format', 'txt', '--batch-size', '500'],
    ['--format', 'csv', '--batch-size', '100'],
  ])(
    '%s %s %s %s: batches smaller than the output buffer reach the reader as they come, so it leaves after the first',
    async (...flags) => {
      const closed = join(dir, `closed-at-${flags.join('')}`);
      const from = api.requests.length;
      const script =
        `"${process.execPath}" "${BIN}" validate "${big}" ${flags.join(' ')} --concurrency 1` +
        ` | { head -1 > /dev/null; sleep 0.2; exec 0<&-; date +%s%3N > "${closed}"; }`;
      const sh = spawn('sh', ['-c', script], { env: { PATH: process.env.PATH ?? '', MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: api.url } });
      const code = await new Promise<number | null>((resolve) => sh.on('close', resolve));
      expect(code).toBe(0);
      const closedAt = Number(readFileSync(closed, 'utf8'));
      const bulk = api.requests.slice(from).filter((r) => r.path === '/api/validate/bulk');
      expect(bulk.filter((r) => r.startedAt > closedAt).map((r) => r.emails.length)).toEqual([]);
      // one at a time: the first answer's rows reach head, the next write finds it gone; held in a
      // 64 KiB buffer, rows reached head only after a dozen (txt) or thirty (csv) answers
      expect(bulk.length).toBeLessThanOrEqual(3);
    },
    60_000,
  );
});
