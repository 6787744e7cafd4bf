import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalValidator } from '../../src/engines/local/index.js';
import type { Verdict } from '../../src/verdict.js';
import { runInProcess } from '../support/run-in-process.js';
import { startServe, type Served } from './spawn.js';
import { waitFor } from '../support/wait.js';

// `mailsift validate` against `mailsift serve`: the whole product talking to itself.
const KEY = 'msk_e2e_key_not_a_secret';
let dir: string;
let keysFile: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mailsift-serve-e2e-'));
  keysFile = join(dir, 'keys.txt');
  await writeFile(keysFile, `other-key\n${KEY}\n`);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** A mix the engine judges differently: plain, role, disposable, bad syntax, and repeats. */
function fixtureEmail(i: number): string {
  if (i % 50 === 49) return fixtureEmail(i - 7); // a duplicate row
  switch (i % 5) {
    case 0:
      return `admin@team${i}.example.com`;
    case 1:
      return `temp${i}@mailinator.com`;
    case 2:
      return `bad..dots${i}@example.com`;
    default:
      return `person.${i}@example${i % 13}.org`;
  }
}

async function engineVerdicts(emails: string[]): Promise<Map<string, Verdict>> {
  const engine = createLocalValidator({ dns: false });
  const verdicts = await engine.validate([...new Set(emails)], new AbortController().signal);
  await engine.close();
  return new Map(verdicts.map((v) => [v.email, v]));
}

async function stop(s: Served): Promise<void> {
  s.child.kill('SIGTERM');
  expect(await s.exit).toBe(0);
}

describe('mailsift validate → mailsift serve', () => {
  it('10,000 rows under a rate limit that forces waiting: every row once, with the engine verdicts', async () => {
    const emails = Array.from({ length: 10_000 }, (_, i) => fixtureEmail(i));
    const input = join(dir, 'contacts.csv');
    await writeFile(input, 'id,email\n' + emails.map((e, i) => `${i},${e}`).join('\n') + '\n');
    const expected = await engineVerdicts(emails);

    // 20 batches of 500 against 10 requests per 2 s: the client must wait for a window.
    const s = await startServe(['--keys-file', keysFile, '--rate-limit', '10/2']);
    try {
      const r = await runInProcess(['validate', input, '--batch-size', '500', '--format', 'json'], {
        env: { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: s.url },
        timeoutMs: 60_000,
      });
      expect(r.stderr).not.toContain(KEY);
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as { results: (Verdict & { error?: unknown })[]; summary: Record<string, number> };
      expect(out.results.map((x) => x.email)).toEqual(emails);
      // one assertion over every row (twenty thousand expect() calls cost seconds): the rows that differ, with their number
      const seen = (v: Verdict & { error?: unknown }) => ({
        status: v.status,
        isValid: v.isValid,
        confidence: v.confidence,
        syntax: v.details.syntax,
        role: v.details.role,
        disposable: v.details.disposable,
        error: v.error,
      });
      const differ = out.results.flatMap((got, i) => {
        const [a, b] = [JSON.stringify(seen(got)), JSON.stringify(seen(expected.get(got.email)!))];
        return a === b ? [] : [`row ${i}: ${a} instead of ${b}`];
      });
      expect(differ).toEqual([]);
      const statuses = new Set(out.results.map((x) => x.status));
      expect(statuses.size).toBeGreaterThanOrEqual(2);
      expect(out.summary).toMatchObject({ total: 10_000, errors: 0, duplicates: 10_000 - expected.size });

      // Each distinct address went to the server exactly once, in batches of at most 500.
      // serve logs a request as its answer leaves: the last line may reach its stderr after the client has read the answer
      const logged = () => [...s.stderr().matchAll(/^mailsift serve: POST \/api\/validate\/bulk 200 addresses=(\d+) /gm)].map((m) => Number(m[1]));
      await waitFor(() => logged().reduce((a, b) => a + b, 0) >= expected.size, { what: "serve's log of every answered batch" }).catch(() => undefined);
      const bulk = logged();
      expect(bulk.reduce((a, b) => a + b, 0)).toBe(expected.size);
      expect(Math.max(...bulk)).toBeLessThanOrEqual(500);
      expect(bulk.length).toBeGreaterThan(10); // more than one window's worth
    } finally {
      await stop(s);
    }
  });

  it('reads Shape B, where data.type carries the status', async () => {
    const emails = Array.from({ length: 200 }, (_, i) => fixtureEmail(i));
    const input = join(dir, 'small.txt');
    await writeFile(input, emails.join('\n') + '\n');
    const expected = await engineVerdicts(emails);
    const s = await startServe(['--keys-file', keysFile, '--shape', 'b']);
    try {
      const r = await runInProcess(['validate', input, '--batch-size', '50', '--format', 'ndjson', '-q'], {
        env: { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: s.url },
      });
      expect(r.code, r.stderr).toBe(0);
      const rows = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Verdict);
      expect(rows.map((x) => x.email)).toEqual(emails);
      // Bulk Shape B items show only isValid and confidence; validity must survive.
      for (const row of rows) expect(row.isValid).toBe(expected.get(row.email)!.isValid);
    } finally {
      await stop(s);
    }
  });
});
