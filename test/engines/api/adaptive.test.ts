// validate (in-process) with no --concurrency (auto, the default) against the fault
// server: what the adaptive limit promises a user — it probes first, spends no
// more than the plan, backs off a failing server, and says what it did.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer, type FaultServerOptions } from '../../support/fault-server.js';
import { runInProcess } from '../../support/run-in-process.js';

const KEY = 'sk_test_ADAPTIVE_5d2e';
const dir = mkdtempSync(join(tmpdir(), 'mailsift-adaptive-'));
let runs = 0;
let server: FaultServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function run(options: FaultServerOptions, count: number, flags: string[], key = KEY) {
  server = await startFaultServer({ apiKey: KEY, ...options });
  const summaryFile = join(dir, `summary-${runs++}.json`);
  const addresses = Array.from({ length: count }, (_, i) => `u${i}@example${i % 5}.com`);
  const r = await runInProcess(['validate', '--no-progress', '--format', 'ndjson', '--summary', summaryFile, ...flags], {
    env: { MAILSIFT_API_KEY: key, MAILSIFT_BASE_URL: server.url },
    stdin: addresses.join('\n') + '\n',
  });
  const rows = r.stdout.trim()
    ? r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { email: string; status: string })
    : [];
  const summary = () => JSON.parse(readFileSync(summaryFile, 'utf8'));
  return { ...r, rows, srv: server, summary };
}

describe('--concurrency auto (the default)', () => {
  it('spends a known plan without a 429, and reports the in-flight peak and mean', async () => {
    const r = await run({ rateLimit: { limit: 4, windowMs: 1000, resetFormat: 'epoch-ms' }, delayMs: 50 }, 24, ['--batch-size', '2']);
    expect(r.code).toBe(0);
    expect(r.rows).toHaveLength(24);
    expect(r.srv.count429()).toBe(0);
    const { concurrency } = r.summary();
    expect(concurrency.mode).toBe('auto');
    expect(concurrency.peak).toBeGreaterThanOrEqual(1);
    expect(concurrency.peak).toBeLessThanOrEqual(4); // never more than the window allows
    expect(concurrency.mean).toBeGreaterThan(0);
    expect(r.stderr).toMatch(/in flight\s+adaptive · at most \d+ · \d+\.\d on average/);
  });

  it.each([401, 403] as const)('a refused key (%i) costs at most two requests: exit 3', async (authStatus) => {
    const r = await run({ authStatus }, 40, ['--batch-size', '2'], 'sk_wrong_key_77');
    expect(r.code).toBe(3);
    expect(r.srv.requests.length).toBeLessThanOrEqual(2);
    expect(r.stderr + r.stdout).not.toContain('sk_wrong_key_77');
  });

  it('a server that only answers 503 ends with exit 4, one request at a time, without a storm', async () => {
    const r = await run({ failRate503: 1 }, 20, ['--batch-size', '2', '--retries', '1']);
    expect(r.code).toBe(4);
    expect(r.rows).toHaveLength(20);
    expect(r.rows.every((x) => x.status === 'unknown')).toBe(true);
    expect(r.srv.requests.length).toBe(10 * 2); // each batch: one try, one retry
    expect(r.summary().concurrency.peak).toBe(1);
    expect(r.summary().elapsedMs).toBeLessThan(20_000);
  });

  it('--verbose says each change of the limit and why; a pinned limit says nothing of the kind', async () => {
    const auto = await run({ delayMs: 30 }, 60, ['--batch-size', '2', '--verbose']);
    expect(auto.code).toBe(0);
    expect(auto.stderr).toMatch(/^mailsift: in flight: limit 1 → 2: answers at \d+ ms \(fastest \d+ ms\): no queue yet, doubling$/m);
    const pinned = await run({ delayMs: 30 }, 20, ['--batch-size', '2', '--verbose', '--concurrency', '3']);
    expect(pinned.code).toBe(0);
    expect(pinned.stderr).not.toMatch(/in flight: limit/);
    expect(pinned.summary().concurrency).toMatchObject({ mode: 'fixed', peak: 3 });
  });

  it('refuses a --concurrency that is neither auto nor 1..64', async () => {
    const r = await run({}, 1, ['--concurrency', '65']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--concurrency.*expected auto or a whole number from 1 to 64/);
    expect(r.srv.requests).toHaveLength(0);
  });
});
