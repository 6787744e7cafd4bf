import { afterEach, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer, type FaultServerOptions } from '../../support/fault-server.js';

let server: FaultServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function post(path: string, body: unknown, key = 'test-key') {
  const res = await fetch(`${server!.url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

async function start(options: FaultServerOptions = {}) {
  server = await startFaultServer(options);
  return server;
}

describe('fault server', () => {
  it('answers a bulk request in Shape A with default verdicts', async () => {
    await start();
    const r = await post('/api/validate/bulk', { emails: ['a@X.com', 'invalid1@x.com', 'risky@x.com', 'unknown@x.com'] });
    expect(r.status).toBe(200);
    expect(r.body.results.map((i: any) => i.status)).toEqual(['valid', 'invalid', 'risky', 'unknown']);
    expect(r.body.results[0]).toMatchObject({ email: 'a@X.com', isValid: true, provider: 'fault-server', details: { domain: 'x.com' } });
    expect(r.body.results[2].details.role).toBe(true);
    expect(r.body.summary).toEqual({ total: 4, valid: 1, invalid: 1, risky: 1 });
  });

  it('answers Shape B and alternates shapes', async () => {
    await start({ shape: 'alternate' });
    const first = await post('/api/validate/bulk', { emails: ['a@x.com'] });
    const second = await post('/api/validate/bulk', { emails: ['a@x.com'] });
    expect(first.body.results).toBeDefined();
    expect(second.body.data.results).toEqual([{ email: 'a@x.com', isValid: true, confidence: 0.95 }]);
    expect(second.body.data.summary).toEqual({ total: 1, valid: 1, invalid: 0 });
    const single = await post('/api/validate', { email: 'risky@x.com' });
    expect(single.body).toMatchObject({ success: true, email: 'risky@x.com', status: 'risky' });
  });

  it('refuses a wrong key with 401 UNAUTHORIZED and records it', async () => {
    await start();
    const r = await post('/api/validate/bulk', { emails: ['a@x.com'] }, 'nope');
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ success: false, error: { code: 'UNAUTHORIZED' } });
    expect(server!.requests).toHaveLength(1);
    expect(server!.requests[0]).toMatchObject({ status: 401, authorization: 'Bearer nope' });
  });

  it('limits requests per window with headers and 429 + Retry-After', async () => {
    await start({ rateLimit: { limit: 2, windowMs: 60_000, resetFormat: 'epoch-s' } });
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof post>> | undefined;
    for (let i = 0; i < 3; i++) {
      last = await post('/api/validate', { email: 'a@x.com' });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 429]);
    expect(last!.headers.get('x-ratelimit-limit')).toBe('2');
    expect(last!.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(last!.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(last!.body.error.code).toBe('RATE_LIMITED');
    expect(server!.count429()).toBe(1);
  });

  it.each([
    ['epoch-ms', /^\d{13}$/],
    ['delta-s', /^\d{1,2}$/],
    ['http-date', /GMT$/],
    ['iso', /^\d{4}-\d\d-\d\dT.*Z$/],
  ] as const)('formats X-RateLimit-Reset as %s', async (resetFormat, pattern) => {
    await start({ rateLimit: { limit: 5, windowMs: 10_000, resetFormat } });
    const r = await post('/api/validate', { email: 'a@x.com' });
    expect(r.headers.get('x-ratelimit-reset')).toMatch(pattern);
  });

  it('rejects oversize batches, poison addresses, and omits results', async () => {
    await start({ maxBatch: 2, tooLargeStatus: 413, poison: (e) => e.startsWith('bad'), omit: (e, n) => e === 'b@x.com' && n === 1, shuffle: true });
    expect((await post('/api/validate/bulk', { emails: ['a@x.com', 'b@x.com', 'c@x.com'] })).status).toBe(413);
    const poisoned = await post('/api/validate/bulk', { emails: ['a@x.com', 'bad@x.com'] });
    expect(poisoned.status).toBe(400);
    expect(poisoned.body.error.code).toBe('INVALID_EMAIL');
    const first = await post('/api/validate/bulk', { emails: ['a@x.com', 'b@x.com'] });
    expect(first.body.results.map((i: any) => i.email)).toEqual(['a@x.com']);
    const again = await post('/api/validate/bulk', { emails: ['a@x.com', 'b@x.com'] });
    expect(again.body.results.map((i: any) => i.email).sort()).toEqual(['a@x.com', 'b@x.com']);
  });

  it('injects scripted faults: 503, reset socket, malformed body', async () => {
    await start({ fault: ({ index }) => (['reset', { status: 503 }, 'malformed'] as const)[index] });
    await expect(post('/api/validate', { email: 'a@x.com' })).rejects.toThrow();
    expect((await post('/api/validate', { email: 'a@x.com' })).status).toBe(503);
    await expect(post('/api/validate', { email: 'a@x.com' })).rejects.toThrow(SyntaxError);
    expect((await post('/api/validate', { email: 'a@x.com' })).status).toBe(200);
    expect(server!.requests.map((r) => r.status)).toEqual([0, 503, 200, 200]);
  });
});
