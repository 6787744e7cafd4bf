import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jobBinding } from '../../src/stores/binding.js';
import { VerdictEncoder } from '../../src/codec/verdict-encoding.js';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { runInProcess } from '../support/run-in-process.js';
import { API_KEY, apiEnv, cachedVerdict, sentEmails } from './helpers.js';

let dir: string;
let server: FaultServer;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mailsift-cache-'));
  server = await startFaultServer({ apiKey: API_KEY, shuffle: true });
});
afterEach(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

const addresses = (from: number, to: number): string[] => Array.from({ length: to - from }, (_, i) => `u${from + i}@example.com`);

async function validate(name: string, emails: string[], extra: string[] = []) {
  await writeFile(join(dir, `${name}.txt`), emails.join('\n') + '\n');
  const r = await runInProcess(['validate', `${name}.txt`, '-o', `${name}.csv`, '--summary', `${name}.json`, '--cache', 'verdicts.cache', ...extra], {
    cwd: dir,
    env: apiEnv(server),
  });
  const summary = r.code === 0 ? JSON.parse(await readFile(join(dir, `${name}.json`), 'utf8')) : undefined;
  return { ...r, summary, csv: r.code === 0 ? await readFile(join(dir, `${name}.csv`), 'utf8') : '' };
}

describe('--cache across runs and input files', () => {
  it('reuses earlier verdicts for another file, counts them, and writes the same output as a fresh run', async () => {
    const a = await validate('monday', addresses(0, 30));
    expect(a.code, a.stderr).toBe(0);
    expect(a.summary.fromCache).toBe(0);
    const before = server.requests.length;

    const b = await validate('tuesday', addresses(20, 50));
    expect(b.code, b.stderr).toBe(0);
    expect(b.summary.fromCache).toBe(10);
    expect(b.stderr).toMatch(/10 from cache/);
    expect(sentEmails(server, before).sort()).toEqual(addresses(30, 50).sort());

    const fresh = await runInProcess(['validate', 'tuesday.txt'], { cwd: dir, env: apiEnv(server) });
    expect(b.csv).toBe(fresh.stdout);
    expect(await readFile(join(dir, 'verdicts.cache'), 'utf8')).not.toContain(API_KEY);
  });

  it('honours --cache-ttl: an older verdict is asked again, a younger one reused', async () => {
    const day = 86_400;
    const now = Math.floor(Date.now() / 1000);
    const { engine, baseUrl, fingerprint } = jobBinding({ engine: 'api', baseUrl: server.url });
    const encoder = new VerdictEncoder('api');
    // Cached verdicts that differ from what the server would say, so reuse shows in the output.
    await writeFile(
      join(dir, 'verdicts.cache'),
      [
        JSON.stringify({ mailsift: 'cache', version: 2, engine, baseUrl, fingerprint }),
        encoder.line(cachedVerdict('old@example.com'), now - 40 * day),
        encoder.line(cachedVerdict('young@example.com'), now - 1 * day),
      ].join('\n') + '\n',
    );

    const r = await validate('list', ['old@example.com', 'young@example.com'], ['--cache-ttl', '30d']);
    expect(r.code, r.stderr).toBe(0);
    expect(sentEmails(server)).toEqual(['old@example.com']);
    expect(r.summary.fromCache).toBe(1);
    expect(r.csv).toMatch(/^old@example\.com,valid,.*fault-server/m);
    expect(r.csv).toMatch(/^young@example\.com,risky,low_confidence,true,0\.42,cached,/m);

    const shorter = await validate('list', ['young@example.com'], ['--cache-ttl', '12h']);
    expect(shorter.code, shorter.stderr).toBe(0);
    expect(shorter.summary.fromCache).toBe(0);
    expect(sentEmails(server)).toEqual(['old@example.com', 'young@example.com']);
  });

  // a bad --cache-ttl: test/cli/plan.test.ts
  it('rejects a cache written against another service, with exit 2', async () => {
    // --no-dns: this machine may have no DNS, and DNS that fails the run is exit 4
    expect((await validate('x', ['a@example.com'], ['--engine', 'local', '--no-dns'])).code).toBe(0);
    const other = await validate('x', ['a@example.com']);
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/^mailsift: --cache verdicts\.cache belongs to another job/);
    expect(server.requests).toHaveLength(0);
  });
});
