import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { request } from 'node:http';
import { createLocalValidator } from '../../src/engines/local/index.js';
import type { Verdict } from '../../src/verdict.js';
import { expectError, expectRateHeaders, KEY, post, serve } from './helpers.js';

// The engine's own verdicts are the reference: serve must pass them through, not judge.
const engine = createLocalValidator({ dns: false });
/** The offline engine, held at each bulk validation until `release()`; `inside` resolves when one has begun. */
function gatedEngine() {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let entered!: () => void;
  const inside = new Promise<void>((r) => (entered = r));
  const real = createLocalValidator({ dns: false });
  const gated = {
    validate: async (emails: readonly string[], signal: AbortSignal) => {
      entered();
      await gate;
      return real.validate(emails, signal);
    },
    validateOne: (email: string) => real.validateOne(email),
  };
  return { engine: gated, inside, release };
}

const MIXED = ['jane.doe@example.com', 'admin@example.com', 'someone@mailinator.com', 'not-an-address', 'jane.doe@example.com'];
let reference: Map<string, Verdict>;

beforeAll(async () => {
  reference = new Map((await engine.validate([...new Set(MIXED)], new AbortController().signal)).map((v) => [v.email, v]));
});

describe('shape A (default)', () => {
  let s: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => (s = await serve()));
  afterAll(() => s.close());

  it('validates one address: the flat result with details and rawResponse', async () => {
    const r = await post(s.url, '/api/validate', { email: 'jane.doe@example.com' });
    const v = reference.get('jane.doe@example.com')!;
    expect(r.status).toBe(200);
    expectRateHeaders(r);
    expect(r.json).toMatchObject({
      success: true,
      email: 'jane.doe@example.com',
      isValid: v.isValid,
      status: v.status,
      confidence: v.confidence,
      provider: v.provider,
      details: { syntax: true, domain: v.details.domain },
    });
    expect(Number.isInteger(r.json.responseTime)).toBe(true);
    expect(typeof r.json.rawResponse).toBe('object');
  });

  it('answers a malformed single address with 400 INVALID_EMAIL', async () => {
    expectError(await post(s.url, '/api/validate', { email: 'not-an-address' }), 400, 'INVALID_EMAIL');
    expectError(await post(s.url, '/api/validate', { email: '' }), 400, 'INVALID_EMAIL');
  });

  it('validates a batch: one item per entry, in order, duplicates kept, summary counted by status', async () => {
    const r = await post(s.url, '/api/validate/bulk', { emails: MIXED });
    expect(r.status).toBe(200);
    expectRateHeaders(r);
    expect(r.json.success).toBe(true);
    expect(r.json.results.map((x: { email: string }) => x.email)).toEqual(MIXED);
    for (const item of r.json.results) {
      const v = reference.get(item.email)!;
      expect(item).toMatchObject({ isValid: v.isValid, status: v.status, confidence: v.confidence, provider: v.provider });
      expect(Object.keys(item).sort()).toEqual(['confidence', 'details', 'email', 'isValid', 'provider', 'status']);
    }
    const statuses = MIXED.map((e) => reference.get(e)!.status);
    const n = (st: string): number => statuses.filter((x) => x === st).length;
    expect(r.json.summary).toEqual({ total: 5, valid: n('valid'), invalid: n('invalid'), risky: n('risky') });
    expect(n('invalid')).toBeGreaterThanOrEqual(1);
  });

  it('takes 1000 addresses and refuses 1001 with TOO_MANY_EMAILS', async () => {
    const emails = Array.from({ length: 1001 }, (_, i) => `user${i}@example.com`);
    const ok = await post(s.url, '/api/validate/bulk', { emails: emails.slice(0, 1000) });
    expect(ok.status).toBe(200);
    expect(ok.json.summary.total).toBe(1000);
    expectError(await post(s.url, '/api/validate/bulk', { emails }), 400, 'TOO_MANY_EMAILS');
  });

  it.each<[string, string, unknown, { raw?: boolean; contentType?: string | null }]>([
    ['malformed JSON', '/api/validate', '{"email": ', { raw: true }],
    ['a JSON array', '/api/validate', ['a@b.c'], {}],
    ['JSON null', '/api/validate', null, {}],
    ['a missing email', '/api/validate', { mail: 'a@b.c' }, {}],
    ['a number for email', '/api/validate', { email: 5 }, {}],
    ['a missing emails', '/api/validate/bulk', { email: 'a@b.c' }, {}],
    ['a string for emails', '/api/validate/bulk', { emails: 'a@b.c' }, {}],
    ['a number inside emails', '/api/validate/bulk', { emails: ['a@b.c', 7] }, {}],
    ['an empty emails', '/api/validate/bulk', { emails: [] }, {}],
    ['invalid UTF-8', '/api/validate', new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), { raw: true }],
    ['text/plain', '/api/validate', { email: 'a@b.c' }, { contentType: 'text/plain' }],
    ['no Content-Type', '/api/validate', { email: 'a@b.c' }, { contentType: null }],
  ])('answers %s with 400 INVALID_REQUEST', async (_name, path, body, opts) => {
    expectError(await post(s.url, path, body, opts), 400, 'INVALID_REQUEST');
  });

  it.each<[string, string | null]>([
    ['no key', null],
    ['a wrong key', 'not-the-key'],
    ['an empty key', ''],
  ])('answers %s with 401 UNAUTHORIZED', async (_name, key) => {
    expectError(await post(s.url, '/api/validate', { email: 'a@example.com' }, { key }), 401, 'UNAUTHORIZED');
  });

  it('answers unknown paths with 404 and wrong methods with 405 and Allow', async () => {
    expectError(await post(s.url, '/api/validat', { email: 'a@example.com' }), 404, 'NOT_FOUND');
    expectError(await post(s.url, '/', undefined, { method: 'GET' }), 404, 'NOT_FOUND');
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const r = await post(s.url, '/api/validate/bulk', { emails: [] }, { method });
      expectError(r, 405, 'METHOD_NOT_ALLOWED');
      expect(r.headers.get('allow')).toBe('POST');
    }
  });

  it('answers a body over 1 MiB with 413, whether its length is declared or chunked', async () => {
    const big = JSON.stringify({ emails: ['x'.repeat(1024 * 1024)] });
    expectError(await post(s.url, '/api/validate/bulk', big, { raw: true }), 413, 'PAYLOAD_TOO_LARGE');
    const chunked = await new Promise<{ status: number; headers: Headers; json: unknown }>((resolve, reject) => {
      const req = request(
        `${s.url}/api/validate/bulk`,
        { method: 'POST', headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' } },
        (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (c: string) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode!, headers: new Headers(res.headers as Record<string, string>), json: JSON.parse(text) }));
        },
      );
      req.on('error', reject);
      for (let i = 0; i < 20; i++) req.write('x'.repeat(64 * 1024)); // 1.25 MiB in chunks, no length
      req.end();
    });
    expectError(chunked, 413, 'PAYLOAD_TOO_LARGE');
    // and the server is fine afterwards
    expect((await post(s.url, '/api/validate', { email: 'jane.doe@example.com' })).status).toBe(200);
  });

  it('answers a request node cannot parse with an error object and the headers', async () => {
    const raw = await new Promise<string>((resolve, reject) => {
      const sock = connect(Number(new URL(s.url).port), '127.0.0.1', () => sock.write('POST /api/validate HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'));
      let text = '';
      sock
        .setEncoding('utf8')
        .on('data', (c: string) => (text += c))
        .on('end', () => resolve(text))
        .on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(raw).toMatch(/X-RateLimit-Limit: \d+\r\n/);
    expect(raw).toMatch(/X-RateLimit-Reset: \d{10}\r\n/);
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toMatchObject({ success: false, error: { code: 'INVALID_REQUEST' } });
  });

  it('logs one line per request without keys or addresses', () => {
    expect(s.log.length).toBeGreaterThan(10);
    for (const line of s.log) {
      expect(line).toMatch(/^(POST|GET|PUT|DELETE|-) \S.* (\d{3}|-) addresses=\d+ \d+\.\dms/);
      expect(line).not.toContain(KEY);
      expect(line).not.toContain('@');
    }
    expect(s.log.some((l) => /^POST \/api\/validate\/bulk 200 addresses=1000 /.test(l))).toBe(true);
  });
});

describe('shape B', () => {
  let s: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => (s = await serve({ shape: 'b' })));
  afterAll(() => s.close());

  it('wraps a single result in data, with the status as data.type', async () => {
    const r = await post(s.url, '/api/validate', { email: 'admin@example.com' });
    const v = reference.get('admin@example.com')!;
    expect(r.status).toBe(200);
    expectRateHeaders(r);
    expect(r.json).toEqual({
      success: true,
      data: {
        email: 'admin@example.com',
        isValid: v.isValid,
        confidence: v.confidence,
        provider: v.provider,
        type: v.status,
        disposable: v.details.disposable,
        role: v.details.role,
      },
    });
  });

  it('wraps bulk results and a summary without risky, counted by isValid', async () => {
    const r = await post(s.url, '/api/validate/bulk', { emails: MIXED });
    expect(r.status).toBe(200);
    const items = MIXED.map((e) => reference.get(e)!);
    expect(r.json).toEqual({
      success: true,
      data: {
        results: items.map((v) => ({ email: v.email, isValid: v.isValid, confidence: v.confidence })),
        summary: { total: 5, valid: items.filter((v) => v.isValid).length, invalid: items.filter((v) => !v.isValid).length },
      },
    });
  });

  it('uses the same error object', async () => {
    expectError(await post(s.url, '/api/validate', { email: 'nope' }), 400, 'INVALID_EMAIL');
  });
});

describe('rate limit and keys', () => {
  it('counts per key, answers a burst past the ceiling with 429 and Retry-After, and opens the next window', async () => {
    const s = await serve({ keys: ['k1', 'k2', 'k3'], rateLimit: { requests: 3, seconds: 60 } });
    try {
      s.clock.now = Date.UTC(2030, 0, 1, 0, 0, 15); // 45 s before the window ends
      const reset = String(Date.UTC(2030, 0, 1, 0, 1, 0) / 1000);
      const remaining: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await post(s.url, '/api/validate', { email: 'jane.doe@example.com' }, { key: 'k1' });
        expect(r.status).toBe(200);
        expectRateHeaders(r, 3);
        expect(r.headers.get('x-ratelimit-reset')).toBe(reset);
        remaining.push(r.headers.get('x-ratelimit-remaining')!);
      }
      expect(remaining).toEqual(['2', '1', '0']);
      for (let i = 0; i < 3; i++) {
        const r = await post(s.url, '/api/validate/bulk', { emails: ['jane.doe@example.com'] }, { key: 'k1' });
        expectError(r, 429, 'RATE_LIMITED');
        expect(r.headers.get('retry-after')).toBe('45');
        expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
      }
      // every key of the file works and has its own window
      for (const key of ['k2', 'k3']) {
        const r = await post(s.url, '/api/validate', { email: 'jane.doe@example.com' }, { key });
        expect(r.status).toBe(200);
        expect(r.headers.get('x-ratelimit-remaining')).toBe('2');
      }
      s.clock.now = Date.UTC(2030, 0, 1, 0, 1, 0);
      const next = await post(s.url, '/api/validate', { email: 'jane.doe@example.com' }, { key: 'k1' });
      expect(next.status).toBe(200);
      expect(next.headers.get('x-ratelimit-remaining')).toBe('2');
    } finally {
      await s.close();
    }
  });

  it('throttles unauthenticated requests per client address, apart from the keys', async () => {
    const s = await serve({ rateLimit: { requests: 2, seconds: 10 } });
    try {
      const codes: number[] = [];
      for (let i = 0; i < 4; i++) codes.push((await post(s.url, '/api/validate', { email: 'a@example.com' }, { key: 'guess' + i })).status);
      expect(codes).toEqual([401, 401, 429, 429]);
      const ok = await post(s.url, '/api/validate', { email: 'jane.doe@example.com' });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('x-ratelimit-remaining')).toBe('1');
    } finally {
      await s.close();
    }
  });
});

/** A keyless POST from a given loopback address (any of 127.0.0.0/8 is this host's). */
function guessFrom(url: string, localAddress: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/api/validate`,
      { method: 'POST', localAddress, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end('{"email":"a@example.com"}');
  });
}

describe('key guessing from many addresses of one network', () => {
  it('is counted per /24 as well as per address: the network gets the ceiling, not each address', async () => {
    const s = await serve({ rateLimit: { requests: 3, seconds: 60 } });
    try {
      const codes: number[] = [];
      // one guess each from six addresses of 127.0.0.0/24, and one from another network
      for (let i = 0; i < 6; i++) codes.push(await guessFrom(s.url, `127.0.0.${20 + i}`, `guess${i}`));
      codes.push(await guessFrom(s.url, '127.0.1.20', 'guess6'));
      expect(codes).toEqual([401, 401, 401, 429, 429, 429, 401]);
      // a valid key from that network is counted against the key, not refused
      const ok = await post(s.url, '/api/validate', { email: 'jane.doe@example.com' });
      expect(ok.status).toBe(200);
    } finally {
      await s.close();
    }
  });
});

describe('faults', () => {
  it('answers 500 SERVER_ERROR when the engine throws, and keeps serving', async () => {
    let broken = true;
    const real = createLocalValidator({ dns: false });
    const s = await serve({
      engine: {
        validate: (emails, signal) => (broken ? Promise.reject(new Error('boom')) : real.validate(emails, signal)),
        validateOne: (email) => (broken ? Promise.reject(new Error('boom')) : real.validateOne(email)),
      },
    });
    try {
      expectError(await post(s.url, '/api/validate', { email: 'a@example.com' }), 500, 'SERVER_ERROR');
      const r = await post(s.url, '/api/validate/bulk', { emails: ['a@example.com'] });
      expectError(r, 500, 'SERVER_ERROR');
      expect(JSON.stringify(r.json)).not.toContain('boom');
      broken = false;
      expect((await post(s.url, '/api/validate', { email: 'jane.doe@example.com' })).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it('survives a bounded fuzz of malformed bodies and still answers correctly', async () => {
    const s = await serve({ bodyLimitBytes: 4096 });
    try {
      let seed = 12345;
      const rand = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
      const valid = JSON.stringify({ emails: ['jane.doe@example.com', 'admin@example.com'] });
      const pieces = ['{', '}', '[', ']', '"', ':', ',', 'null', 'true', '1e999', '-0', '"emails"', '"email"', '\\u0000', '\\', '\u2028', 'x'.repeat(3000)];
      const bodies: (string | Uint8Array)[] = [];
      for (let i = 0; i < 150; i++) {
        switch (rand(5)) {
          case 0: // a truncated or cut-up valid body
            bodies.push(valid.slice(0, rand(valid.length)) + valid.slice(rand(valid.length)));
            break;
          case 1: // random bytes
            bodies.push(Uint8Array.from({ length: rand(300) }, () => rand(256)));
            break;
          case 2: // JSON-ish noise
            bodies.push(Array.from({ length: rand(12) }, () => pieces[rand(pieces.length)]).join(''));
            break;
          case 3: // right keys, wrong types
            bodies.push(JSON.stringify({ emails: [[1], { a: 1 }, null, 3, true][rand(5)], email: [null, 4, {}, []][rand(4)] }));
            break;
          default: // deep nesting
            bodies.push('['.repeat(rand(5000)) + ']'.repeat(rand(5000)));
        }
      }
      for (const [i, body] of bodies.entries()) {
        const path = i % 2 ? '/api/validate' : '/api/validate/bulk';
        const r = await post(s.url, path, body, { raw: true });
        expect([200, 400, 413], `body #${i}`).toContain(r.status);
        expectRateHeaders(r);
        if (r.status !== 200) expect(r.json.success).toBe(false);
      }
      const after = await post(s.url, '/api/validate/bulk', { emails: MIXED });
      expect(after.status).toBe(200);
      expect(after.json.summary.total).toBe(5);
    } finally {
      await s.close();
    }
  });

  it('drains on close: a request in flight is answered, new connections are refused', async () => {
    const { engine: gated, inside, release } = gatedEngine();
    const s = await serve({ engine: gated });
    const inFlight = post(s.url, '/api/validate/bulk', { emails: ['jane.doe@example.com'] });
    await inside;
    let closed = false;
    const closing = s.close().then(() => (closed = true));
    await expect(fetch(`${s.url}/api/validate`, { method: 'POST' })).rejects.toThrow();
    expect(closed).toBe(false);
    release();
    const r = await inFlight;
    expect(r.status).toBe(200);
    expect(r.json.results).toHaveLength(1);
    await closing;
    expect(closed).toBe(true);
  });
});

describe('clients that go away', () => {
  it('survives hang-ups mid-body and mid-validation, logging them, and keeps serving', async () => {
    const { engine: gated, inside, release } = gatedEngine();
    const s = await serve({ engine: gated });
    try {
      const port = Number(new URL(s.url).port);
      const head = (length: number): string =>
        `POST /api/validate/bulk HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
      const wentAway = (): number => s.log.filter((l) => / - addresses=\d+ .*\(client went away\)$/.test(l)).length;
      const hangUp = (text: string, after: Promise<void>): void => {
        const sock = connect(port, '127.0.0.1', () => {
          sock.write(text);
          void after.then(() => sock.destroy());
        });
        sock.on('error', () => {});
      };
      // 1. mid-body: promises 100 bytes, sends 10, hangs up
      hangUp(head(100) + '{"emails":', Promise.resolve());
      await expect.poll(wentAway, { timeout: 5000 }).toBe(1);
      // 2. mid-validation: a whole body, then gone while the engine works
      const body = JSON.stringify({ emails: ['jane.doe@example.com'] });
      hangUp(head(Buffer.byteLength(body)) + body, inside);
      await expect.poll(wentAway, { timeout: 5000 }).toBe(2);
      release();
      const r = await post(s.url, '/api/validate/bulk', { emails: ['jane.doe@example.com'] });
      expect(r.status).toBe(200);
      expect(s.log).toHaveLength(3); // nothing answered or logged for the dead clients
    } finally {
      await s.close();
    }
  });
});
