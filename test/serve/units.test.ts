import { describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FixedWindowLimiter, parseRateLimit } from '../../src/serve/rate-limit.js';
import { bearerToken, generateKey, KeyStore, parseKeysFile } from '../../src/serve/keys.js';
import { isLoopback } from '../../src/cli/loopback.js';
import { loadServeConfig } from '../../src/cli/serve/config.js';
import { planServe } from '../../src/cli/serve/plan.js';
import { isJsonContentType } from '../../src/serve/body.js';
import { UsageError } from '../../src/errors.js';
import { clockReading } from '../support/fake-clock.js';

describe('parseRateLimit', () => {
  it.each([
    ['60/60', { requests: 60, seconds: 60 }],
    [' 10 / 2 ', { requests: 10, seconds: 2 }],
    ['0/60', undefined],
    ['10/0', undefined],
    ['10', undefined],
    ['1.5/2', undefined],
    ['-1/2', undefined],
    ['a/b', undefined],
  ])('%j → %j', (text, expected) => expect(parseRateLimit(text)).toEqual(expected));
});

describe('FixedWindowLimiter', () => {
  it('allows the ceiling per window and bucket, then refuses until the window ends', async () => {
    let now = 120_500; // 0.5 s into a 60 s window that ends at 180 s
    const limiter = new FixedWindowLimiter(
      { requests: 2, seconds: 60 },
      clockReading(() => now),
    );
    expect(await limiter.take('a')).toEqual({ allowed: true, limit: 2, remaining: 1, resetEpochSeconds: 180, retryAfterSeconds: 60 });
    expect(await limiter.take('a')).toMatchObject({ allowed: true, remaining: 0 });
    expect(await limiter.take('b')).toMatchObject({ allowed: true, remaining: 1 }); // buckets are independent
    now = 179_100;
    expect(await limiter.take('a')).toEqual({ allowed: false, limit: 2, remaining: 0, resetEpochSeconds: 180, retryAfterSeconds: 1 });
    now = 180_000;
    expect(await limiter.take('a')).toMatchObject({ allowed: true, remaining: 1, resetEpochSeconds: 240 });
  });
});

describe('keys', () => {
  it('identifies each of several keys, and nothing else', () => {
    const store = new KeyStore(['k1', 'k2', 'k3']);
    const ids = ['k1', 'k2', 'k3'].map((k) => store.identify(k));
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{64}$/);
    expect(ids).not.toContain('k1');
    for (const wrong of ['', 'k', 'k4', 'K1', 'k1 ', 'k1k1']) expect(store.identify(wrong)).toBeUndefined();
  });

  it('parses keys files: one per line, blanks and # comments skipped, CRLF tolerated', () => {
    expect(parseKeysFile('# team keys\r\nk1\r\n\n  k2  \n#k3\n')).toEqual(['k1', 'k2']);
  });

  it.each([
    ['Bearer abc', 'abc'],
    ['bearer   abc ', 'abc'],
    ['Basic abc', undefined],
    ['Bearer', undefined],
    ['Bearer a b', undefined],
    [undefined, undefined],
  ])('bearerToken(%j) → %j', (header, expected) => expect(bearerToken(header)).toBe(expected));

  it('generates distinct, URL-safe keys', () => {
    const a = generateKey();
    expect(a).toMatch(/^msk_[A-Za-z0-9_-]{43}$/);
    expect(generateKey()).not.toBe(a);
  });
});

it.each([
  ['application/json', true],
  ['Application/JSON; charset=utf-8', true],
  ['text/plain', false],
  ['application/jsonx', false],
  [undefined, false],
])('isJsonContentType(%j) → %j', (header, expected) => expect(isJsonContentType(header)).toBe(expected));

it.each([
  ['127.0.0.1', true],
  ['127.1.2.3', true],
  ['localhost', true],
  ['::1', true],
  ['[::1]', true],
  ['0.0.0.0', false],
  ['192.168.1.5', false],
  ['example.com', false],
])('isLoopback(%j) → %j', (host, expected) => expect(isLoopback(host)).toBe(expected));

describe('loadServeConfig', () => {
  // the flags as the CLI plans them (test/cli/plan.test.ts holds the flag errors); the files are read here
  const settings = async (argv: string[] = []) => {
    const planned = await planServe(argv, { env: {}, stdinIsTTY: false, stdoutIsTTY: false });
    if (!('plan' in planned)) throw new Error(`expected a plan: ${JSON.stringify(planned)}`);
    return planned.plan.settings;
  };

  it('defaults: one generated key, shape a, 60/60', async () => {
    const c = await loadServeConfig(await settings());
    expect(c.keys).toEqual([c.generatedKey]);
    expect(c).toMatchObject({ port: 8080, shape: 'a', rateLimit: { requests: 60, seconds: 60 }, dnsTimeoutMs: 2000 });
  });

  it('reads a keys file with several keys and generates none', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mailsift-serve-'));
    const file = join(dir, 'keys.txt');
    await writeFile(file, 'k1\nk2\n# old\nk3\n');
    const c = await loadServeConfig(await settings(['--keys-file', file]));
    expect(c.keys).toEqual(['k1', 'k2', 'k3']);
    expect(c.generatedKey).toBeUndefined();
  });

  it('refuses a missing keys file with a usage error', async () => {
    const err = await loadServeConfig(await settings(['--keys-file', '/nonexistent/keys.txt'])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(/cannot read .*ENOENT/);
  });

  it('refuses an empty keys file, saying how to make a key', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mailsift-serve-'));
    const file = join(dir, 'keys.txt');
    await writeFile(file, '# nothing yet\n');
    await expect(loadServeConfig(await settings(['--keys-file', file]))).rejects.toThrow(/holds no keys .*keys create/);
  });

  it('allows plain HTTP off loopback when told to', async () => {
    await expect(loadServeConfig(await settings(['--host', '0.0.0.0', '--allow-insecure-http']))).resolves.toMatchObject({ host: '0.0.0.0' });
  });
});
