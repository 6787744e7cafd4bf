import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizeBulk, normalizeSingle } from '../../../src/engines/api/normalize.js';
import { startDnsServer, type TestDnsServer } from '../../support/dns-server.js';
import { startFaultServer } from '../../support/fault-server.js';
import { BIN, parseCsv } from '../../support/run-cli.js';
import { runInProcess } from '../../support/run-in-process.js';

// `is_valid` is one function of the status on every path: empty for `unknown`,
// even where a server (the spec types isValid as a boolean) answers false.
const KEY = 'msk_is_valid_test_key';
const dir = mkdtempSync(join(tmpdir(), 'mailsift-isvalid-'));
const input = join(dir, 'list.txt');
writeFileSync(input, 'jane@mx.test\nunknown.zed@servfail.test\nnot-an-address\n');
let dns: TestDnsServer;
beforeAll(async () => {
  dns = await startDnsServer();
});
afterAll(async () => {
  await dns.close();
});

const isValidByStatus = (stdout: string): string[] =>
  parseCsv(stdout)
    .slice(1)
    .map(([, status, , isValid]) => `${status}:${isValid}`);
const EXPECTED = ['valid:true', 'unknown:', 'invalid:false'];

/** `mailsift serve` on the offline engine, with a resolver that fails for servfail.test. */
async function serve(): Promise<{ url: string; stop(): Promise<void> }> {
  const keys = join(dir, 'keys.txt');
  writeFileSync(keys, `${KEY}\n`);
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--keys-file', keys, '--dns-server', dns.address, '--dns-timeout', '10000'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not listen: ${err}`)), 10_000);
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      err += c;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

describe('is_valid of an unknown verdict', () => {
  it('is empty with the offline engine', async () => {
    const r = await runInProcess(['validate', input, '--engine', 'local', '--dns-server', dns.address, '--dns-timeout', '10000', '-q']);
    expect(r.code).toBe(0);
    expect(isValidByStatus(r.stdout)).toEqual(EXPECTED);
  });

  it('is empty through mailsift serve, which answers isValid false as the spec types it', async () => {
    const s = await serve();
    try {
      const res = await fetch(`${s.url}/api/validate/bulk`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ emails: ['unknown.zed@servfail.test'] }),
      });
      const body = (await res.json()) as { results: { status: string; isValid: unknown }[] };
      expect(body.results[0]).toMatchObject({ status: 'unknown', isValid: false });

      const r = await runInProcess(['validate', input, '-q'], { env: { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: s.url } });
      // serve says that this unknown is undetermined (its DNS did not answer): a row without a verdict, exit 4
      expect(r.code).toBe(4);
      expect(isValidByStatus(r.stdout)).toEqual(EXPECTED);
      const json = await runInProcess(['validate', input, '-q', '--format', 'ndjson'], { env: { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: s.url } });
      expect(
        json.stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l).isValid),
      ).toEqual([true, null, false]);
    } finally {
      await s.stop();
    }
  });

  // (Shape B bulk items carry no status at all: there an unknown cannot be told from an invalid.)
  it('is empty through an API that answers isValid false for it', async () => {
    const server = await startFaultServer({ apiKey: KEY });
    try {
      const r = await runInProcess(['validate', input, '-q'], { env: { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: server.url } });
      expect(r.code).toBe(0);
      expect(isValidByStatus(r.stdout)).toEqual(EXPECTED);
    } finally {
      await server.close();
    }
  });

  it('normalisation keeps isValid for the other statuses, as the server gave it', () => {
    const item = (status: string, isValid: boolean) => ({ email: `${status}@x.test`, isValid, status, confidence: 0.5, provider: 'p', details: {} });
    const got = normalizeBulk({ results: [item('unknown', false), item('unknown', true), item('risky', false), item('valid', true)] })!;
    expect(got.map((v) => v.isValid)).toEqual([undefined, undefined, false, true]);
    expect(normalizeSingle({ email: 'a@x.test', isValid: false, status: 'unknown', confidence: 0, provider: 'p', details: {} })!.isValid).toBeUndefined();
    // Shape B: no status; a `type` of unknown makes it one
    expect(normalizeBulk({ data: { results: [{ email: 'b@x.test', isValid: false, type: 'unknown' }] } })![0]).toMatchObject({
      status: 'unknown',
      isValid: undefined,
    });
  });
});
