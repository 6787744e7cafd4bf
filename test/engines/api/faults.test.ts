// The command (in-process: main(argv, io)) against the fault server: issue 3's promises as a user sees
// them — every row once with the right verdict, the exit code, and how many
// requests (and 429s) the server had to take.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultVerdict, startFaultServer, type FaultServer, type FaultServerOptions, type ResetFormat } from '../../support/fault-server.js';
import { parseCsv } from '../../support/run-cli.js';
import { runInProcess } from '../../support/run-in-process.js';

const KEY = 'sk_test_FAULTS_91c7';
const dir = mkdtempSync(join(tmpdir(), 'mailsift-faults-'));
let runs = 0;

/** one run against a server of its own, closed once the run has ended (what it recorded stays readable) */
async function run(options: FaultServerOptions, addresses: string[], flags: string[], key = KEY) {
  const server = await startFaultServer({ apiKey: KEY, ...options });
  const summaryFile = join(dir, `summary-${runs++}.json`);
  const r = await runInProcess(['validate', '--no-progress', '--summary', summaryFile, ...flags], {
    env: { MAILSIFT_API_KEY: key, MAILSIFT_BASE_URL: server.url },
    stdin: addresses.join('\n') + '\n',
  }).finally(() => server.close());
  const rows = parseCsv(r.stdout);
  const header = rows[0] ?? [];
  const col = (name: string) => header.indexOf(name);
  const out = rows.slice(1).map((row) => ({ email: row[0]!, status: row[col('status')]!, error: row[col('error')] ?? '' }));
  if (r.code !== 0 && r.code !== 3 && r.code !== 4) console.error(r.stderr);
  const summary = () => JSON.parse(readFileSync(summaryFile, 'utf8'));
  return { ...r, rows: out, srv: server, summary };
}

const mixed = (n: number, tag = '') => Array.from({ length: n }, (_, i) => `${['', 'invalid', 'risky', 'unknown'][i % 4]}u${i}${tag}@Example${i % 7}.com`);
const expected = (email: string) => defaultVerdict(email).status;
/** Addresses the server gave a verdict for, counting each 200 response. */
const answeredTimes = (srv: FaultServer) => {
  const times = new Map<string, number>();
  for (const r of srv.requests) if (r.status === 200) for (const e of r.emails) times.set(e, (times.get(e) ?? 0) + 1);
  return times;
};

// Each case waits for real rate-limit windows against a server of its own: side by side.
describe.concurrent('rate limits', () => {
  it.each(['epoch-s', 'delta-s', 'http-date'] as ResetFormat[])('paces %s resets: every row, no 429, exit 0', async (resetFormat) => {
    // six requests against three per window: the fourth must wait for the next window
    const addresses = mixed(12);
    const r = await run({ rateLimit: { limit: 3, windowMs: 1000, resetFormat } }, addresses, ['--batch-size', '2', '--concurrency', '4']);
    expect(r.code).toBe(0);
    expect(r.rows.map((x) => [x.email, x.status])).toEqual(addresses.map((e) => [e, expected(e)]));
    expect(r.srv.count429()).toBe(0);
    expect(r.srv.requests).toHaveLength(6);
    // a window never carried more than the limit
    const windows = new Map<number, number>();
    for (const q of r.srv.requests) windows.set(Math.floor(q.at / 1000), (windows.get(Math.floor(q.at / 1000)) ?? 0) + 1);
    expect(Math.max(...windows.values())).toBeLessThanOrEqual(3);
  });

  it.each([120_000, -120_000])('corrects epoch resets for a server clock off by %i ms (Date header)', async (clockOffsetMs) => {
    const addresses = mixed(12);
    const r = await run({ clockOffsetMs, rateLimit: { limit: 3, windowMs: 1000, resetFormat: 'epoch-s' } }, addresses, [
      '--batch-size',
      '2',
      '--concurrency',
      '4',
    ]);
    expect(r.code).toBe(0);
    expect(r.rows.map((x) => x.status)).toEqual(addresses.map(expected));
    // The Date header has one-second resolution, so the correction can be off by
    // up to a second: unlucky 429s under load are allowed, two of them (one was
    // seen to be too few on a loaded machine). Uncorrected, a clock 2 min behind
    // sends all six requests into the first window (three 429s at least), one
    // 2 min ahead waits 2 min per window (the test times out).
    expect(r.srv.count429()).toBeLessThanOrEqual(2);
  });

  it('a 429 pauses every worker until Retry-After, and costs no attempt', async () => {
    // sixteen batches: however the answers race the 429, most are still unsent when it lands
    const addresses = mixed(32);
    const r = await run({ fault: ({ index }) => (index === 2 ? { status: 429, code: 'RATE_LIMITED', retryAfter: 1 } : undefined) }, addresses, [
      '--batch-size',
      '2',
      '--concurrency',
      '4',
      '--retries',
      '0',
    ]);
    expect(r.code).toBe(0);
    expect(r.rows.map((x) => x.status)).toEqual(addresses.map(expected));
    const limited = r.srv.requests.find((q) => q.status === 429)!;
    const batch = (q: { emails: string[] }) => q.emails.join();
    // sent again once, after Retry-After; and other workers' batches waited too
    // (without the pause all sixteen batches are done within a few ms)
    expect(r.srv.requests.filter((q) => q !== limited && batch(q) === batch(limited))).toHaveLength(1);
    const afterPause = r.srv.requests.filter((q) => q.at >= limited.at + 950);
    expect(afterPause.map(batch)).toContain(batch(limited));
    expect(afterPause.length).toBeGreaterThan(1);
    expect(r.srv.count429()).toBe(1);
    expect(r.summary().rateLimited).toBe(1);
  });

  it('gives up with RATE_LIMITED (exit 4) when the server asks to wait past the limit', async () => {
    const addresses = mixed(8);
    const r = await run({ fault: () => ({ status: 429, code: 'RATE_LIMITED', retryAfter: 3600 }) }, addresses, ['--batch-size', '2']);
    expect(r.code).toBe(4);
    expect(r.rows.map((x) => [x.status, x.error])).toEqual(addresses.map(() => ['unknown', 'RATE_LIMITED']));
    // the probe drew the 429; nobody else was sent into it
    expect(r.srv.requests).toHaveLength(1);
  });
});

describe('faults', () => {
  it('survives 503s, reset sockets, truncated bodies and dropped results: every row right, exit 0', async () => {
    const addresses = mixed(240);
    const r = await run(
      // Results are left out only the first time (a random drop could also hit the
      // one re-ask, and MISSING_RESULT would then be the right answer).
      {
        failRate503: 0.2,
        resetRate: 0.05,
        truncateRate: 0.05,
        shuffle: true,
        lowercaseEcho: true,
        seed: 7,
        omit: (email, attempt) => attempt === 1 && email.length % 5 === 0,
      },
      addresses,
      ['--batch-size', '10', '--concurrency', '4', '--retries', '10'],
    );
    expect(r.code).toBe(0);
    expect(r.rows.map((x) => [x.email, x.status, x.error])).toEqual(addresses.map((e) => [e, expected(e), '']));
    const statuses = new Set(r.srv.requests.map((q) => q.status));
    expect(statuses).toContain(503);
    expect(statuses).toContain(0);
    const summary = r.summary();
    expect(summary.retries).toBeGreaterThan(0);
    expect(summary.requests).toBe(r.srv.requests.length);
  });

  it('exhausted retries leave the batch unknown with SERVER_ERROR / NETWORK / TIMEOUT, the rest done, exit 4', async () => {
    const addresses = ['ok1@x.com', 'doomed503@x.com', 'doomedreset@x.com', 'doomedhang@x.com', 'ok2@x.com'];
    const r = await run(
      {
        fault: ({ emails }) =>
          emails.includes('doomed503@x.com')
            ? { status: 503 }
            : emails.includes('doomedreset@x.com')
              ? 'reset'
              : emails.includes('doomedhang@x.com')
                ? 'hang'
                : undefined,
      },
      addresses,
      ['--batch-size', '1', '--concurrency', '4', '--retries', '1', '--timeout', '1'],
    );
    expect(r.code).toBe(4);
    expect(r.rows.map((x) => [x.email, x.status, x.error])).toEqual([
      ['ok1@x.com', 'valid', ''],
      ['doomed503@x.com', 'unknown', 'SERVER_ERROR'],
      ['doomedreset@x.com', 'unknown', 'NETWORK'],
      ['doomedhang@x.com', 'unknown', 'TIMEOUT'],
      ['ok2@x.com', 'valid', ''],
    ]);
    // one try and one retry each
    for (const doomed of ['doomed503@x.com', 'doomedreset@x.com', 'doomedhang@x.com']) {
      expect(r.srv.requests.filter((q) => q.emails.includes(doomed))).toHaveLength(2);
    }
  });

  it.each([401, 403] as const)('a refused key (%i) costs one request: exit 3, the key never shown', async (authStatus) => {
    const r = await run({ authStatus }, mixed(40), ['--batch-size', '2', '--concurrency', '8'], 'sk_wrong_key_123');
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/refused the key/);
    expect(r.stderr + r.stdout).not.toContain('sk_wrong_key_123');
    expect(r.srv.requests).toHaveLength(1);
  });

  it.each([400, 413] as const)('batches refused as too large (%i) are halved for the rest of the run', async (tooLargeStatus) => {
    const addresses = mixed(40);
    const r = await run({ maxBatch: 3, tooLargeStatus }, addresses, ['--batch-size', '10', '--concurrency', '2']);
    expect(r.code).toBe(0);
    expect(r.rows.map((x) => x.status)).toEqual(addresses.map(expected));
    expect([...answeredTimes(r.srv).values()].every((n) => n === 1)).toBe(true);
    const refused = r.srv.requests.filter((q) => q.status === tooLargeStatus);
    // 10 → 5 → 2: a couple of refusals while learning, not one per batch
    expect(refused.length).toBeLessThanOrEqual(4);
    const afterLearning = r.srv.requests.slice(r.srv.requests.lastIndexOf(refused.at(-1)!) + 1);
    expect(afterLearning.every((q) => q.emails.length <= 2)).toBe(true);
  });

  it('a batch spoilt by bad addresses is split: offenders invalid, the rest validated normally', async () => {
    const addresses = mixed(16);
    addresses[3] = 'poison.one@x.com';
    addresses[12] = 'poison.two@x.com';
    const r = await run({ poison: (e) => e.startsWith('poison') }, addresses, ['--batch-size', '8']);
    expect(r.code).toBe(0);
    expect(r.rows.map((x) => x.status)).toEqual(addresses.map((e) => (e.startsWith('poison') ? 'invalid' : expected(e))));
    expect([...answeredTimes(r.srv).keys()].sort()).toEqual(addresses.filter((e) => !e.startsWith('poison')).sort());
  });
});
