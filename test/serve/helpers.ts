import { expect } from 'vitest';
import { startServer, type RunningServer, type ServeOptions } from '../../src/serve/server.js';
import { createLocalValidator } from '../../src/engines/local/index.js';
import { clockReading } from '../support/fake-clock.js';

export const KEY = 'test-key-one';

export interface Reply {
  status: number;
  headers: Headers;
  json: any;
}

/** A server on 127.0.0.1:0 with the real engine (no DNS) and a controllable clock. */
export async function serve(overrides: Partial<ServeOptions> = {}): Promise<RunningServer & { log: string[]; clock: { now: number } }> {
  const log: string[] = [];
  const clock = { now: Date.UTC(2030, 0, 1, 0, 0, 0) };
  const server = await startServer({
    host: '127.0.0.1',
    port: 0,
    keys: [KEY],
    rateLimit: { requests: 1000, seconds: 60 },
    shape: 'a',
    engine: createLocalValidator({ dns: false }),
    onLog: (line) => log.push(line),
    clock: clockReading(() => clock.now),
    ...overrides,
  });
  return { ...server, log, clock };
}

export async function post(
  url: string,
  path: string,
  body: unknown,
  opts: { key?: string | null; contentType?: string | null; method?: string; raw?: boolean } = {},
): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (opts.key !== null) headers['Authorization'] = `Bearer ${opts.key ?? KEY}`;
  if (opts.contentType !== null) headers['Content-Type'] = opts.contentType ?? 'application/json';
  const method = opts.method ?? 'POST';
  const res = await fetch(url + path, {
    method,
    headers,
    body: method === 'GET' || method === 'HEAD' ? undefined : opts.raw ? (body as string | Uint8Array) : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = text;
  }
  return { status: res.status, headers: res.headers, json };
}

/** Every response, errors included, carries the three rate-limit headers (PRODUCT.md §2). */
export function expectRateHeaders(r: Reply, limit?: number): void {
  for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
    expect(r.headers.get(h), h).toMatch(/^\d+$/);
  }
  if (limit !== undefined) expect(r.headers.get('x-ratelimit-limit')).toBe(String(limit));
  // epoch seconds: this century, not milliseconds
  expect(Number(r.headers.get('x-ratelimit-reset'))).toBeGreaterThan(1e9);
  expect(Number(r.headers.get('x-ratelimit-reset'))).toBeLessThan(1e10);
}

export function expectError(r: Reply, status: number, code: string): void {
  expect(r.status).toBe(status);
  expect(r.json).toEqual({
    success: false,
    error: { code, message: expect.any(String), details: expect.any(String) },
  });
  expectRateHeaders(r);
}
