// Issue 17 item 1: a failing API is explained — one line per cause, with advice
// that fits it — and --verbose / --dry-run / error sources behave as promised.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../../support/fault-server.js';
import { runInProcess } from '../../support/run-in-process.js';

const KEY = 'sk_test_EXPLAIN_5e1f';
const dir = mkdtempSync(join(tmpdir(), 'mailsift-explain-'));
const stdin = 'a@example.com\nb@example.com\nc@example.com\n';
let server: FaultServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const causeLines = (stderr: string) => stderr.split('\n').filter((l) => /without a verdict\)$/.test(l));

describe('failures explained', () => {
  it('nothing listening: names host, port and ECONNREFUSED, blames the variable that set the URL, no journal advice', async () => {
    const summary = join(dir, 'refused.json');
    const r = await runInProcess(['validate', '--retries', '1', '--summary', summary, '--format', 'ndjson'], {
      env: { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: 'http://127.0.0.1:1' },
      stdin,
    });
    expect(r.code).toBe(4);
    const lines = causeLines(r.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^mailsift: could not connect to 127\.0\.0\.1:1 \(ECONNREFUSED\): .*MAILSIFT_BASE_URL.*\(3 addresses without a verdict\)$/);
    expect(lines[0]).not.toMatch(/journal/);
    // each row's error says it too
    const errors = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).error);
    expect(errors).toEqual(Array(3).fill({ code: 'NETWORK', message: expect.stringContaining('could not connect to 127.0.0.1:1 (ECONNREFUSED)') }));
    expect(JSON.parse(readFileSync(summary, 'utf8')).failures).toEqual([
      expect.objectContaining({ kind: 'connect', cause: 'could not connect to 127.0.0.1:1 (ECONNREFUSED)', addresses: 3 }),
    ]);
    expect(r.stderr + r.stdout).not.toContain(KEY);
  });

  it('--format json carries the same summary as --summary: its failures included (issue 34.2: the summary is built whole before it is written)', async () => {
    const summary = join(dir, 'json-summary.json');
    const r = await runInProcess(['validate', '--retries', '0', '--summary', summary, '--format', 'json'], {
      env: { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: 'http://127.0.0.1:1' },
      stdin,
    });
    expect(r.code).toBe(4);
    const embedded = JSON.parse(r.stdout).summary;
    expect(embedded.failures).toEqual([expect.objectContaining({ kind: 'connect', addresses: 3 })]);
    const { elapsedMs: _a, ...fromJson } = embedded;
    const { elapsedMs: _b, ...fromFile } = JSON.parse(readFileSync(summary, 'utf8'));
    expect(fromJson).toEqual(fromFile);
  });

  it('a base URL with a path: one 404 line with the full URL and "check --base-url"', async () => {
    server = await startFaultServer({ apiKey: KEY });
    const r = await runInProcess(['validate', '--base-url', `${server.url}/v1`], { env: { MAILSIFT_API_KEY: KEY }, stdin });
    expect(r.code).toBe(4);
    const lines = causeLines(r.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`HTTP 404 NOT_FOUND for POST ${server.url}/v1/api/validate/bulk: check --base-url`);
    expect(lines[0]).not.toMatch(/re-run/);
  });

  it('two causes in one run get two lines; a 5xx gets the journal advice', async () => {
    server = await startFaultServer({
      apiKey: KEY,
      fault: ({ emails }) =>
        emails.includes('a@example.com') ? { status: 503, code: 'SERVER_ERROR' } : emails.includes('b@example.com') ? { status: 422, code: 'NOPE' } : undefined,
    });
    const r = await runInProcess(['validate', '--batch-size', '1', '--retries', '0', '--journal', join(dir, 'two.journal')], {
      env: { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: server.url },
      stdin,
    });
    expect(r.code).toBe(4);
    const lines = causeLines(r.stderr).sort();
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/HTTP 422 NOPE for POST .*\/api\/validate\/bulk: the API rejected the request itself; run with --verbose/);
    expect(lines[1]).toMatch(/HTTP 503 SERVER_ERROR from POST .*: the API is failing; re-run the same command later: --journal .*two\.journal/);
  });

  it('a timeout and a TLS handshake against a plain-HTTP server are named as such', async () => {
    server = await startFaultServer({ apiKey: KEY, fault: () => 'hang' });
    const slow = await runInProcess(['validate', '--timeout', '0.3', '--retries', '0'], {
      env: { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: server.url },
      stdin,
    });
    expect(slow.code).toBe(4);
    expect(causeLines(slow.stderr)[0]).toMatch(/no answer within 0\.3 s to POST .* \(timed out\): .*--timeout/);

    const tls = await runInProcess(['validate', '--retries', '0'], {
      env: { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: server.url.replace('http:', 'https:') },
      stdin,
    });
    expect(tls.code).toBe(4);
    expect(causeLines(tls.stderr)[0]).toMatch(/TLS handshake with 127\.0\.0\.1:\d+ failed.*: check that MAILSIFT_BASE_URL has the right scheme/);
  });

  it('--verbose logs each request and answer with the key redacted', async () => {
    server = await startFaultServer({ apiKey: KEY, rateLimit: { limit: 100, windowMs: 60_000, resetFormat: 'epoch-s' } });
    const r = await runInProcess(['validate', '-v'], { env: { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: server.url }, stdin });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`> POST ${server.url}/api/validate/bulk \\(3 addresses\\) authorization: Bearer \\[redacted\\]`));
    expect(r.stderr).toMatch(/< HTTP 200 .*\/api\/validate\/bulk in \d+ ms · x-ratelimit-limit: 100 · x-ratelimit-remaining: 99/);
    expect(r.stderr).not.toContain(KEY);
  });

  it('--dry-run sends nothing and says the URL and key were not tried, and how to try them', async () => {
    server = await startFaultServer({ apiKey: KEY });
    const r = await runInProcess(['validate', '--dry-run', '--base-url', server.url], { env: { MAILSIFT_API_KEY: KEY }, stdin });
    expect(r.code).toBe(0);
    expect(server.requests).toHaveLength(0);
    expect(r.stdout).toContain(`the API at ${server.url} (--base-url) and the key (MAILSIFT_API_KEY) were not contacted`);
    expect(r.stdout).toContain(`mailsift check --base-url ${server.url} someone@example.com`);
  });

  // A bad value blamed on where it came from (the variable, not the flag): test/cli/plan.test.ts.
  it('a refused key names the file it came from', async () => {
    server = await startFaultServer({ apiKey: KEY });
    const file = join(dir, 'wrong.key');
    writeFileSync(file, 'sk_wrong\n');
    const refused = await runInProcess(['validate', '--api-key-file', file], { env: { MAILSIFT_BASE_URL: server.url }, stdin });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toBe(`mailsift: the API refused the key (HTTP 401); check --api-key-file ${file}\n`);
  });
});
