// When a request left and when its answer's first byte came, against a real
// server on loopback that the test holds at each step while it moves a fake
// clock: a reset told in seconds counts from the send (the server counted the
// request when it arrived), and the round trip the adaptive limit reads ends at
// the answer's headers, not after this process has read and parsed the body.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool, type Dispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { Caller } from '../../../src/engines/api/caller.js';
import type { LimitChange } from '../../../src/engines/api/concurrency-limit.js';
import { ApiHttp } from '../../../src/engines/api/http.js';
import { normalizeBulk } from '../../../src/engines/api/normalize.js';
import { FakeClock, flush } from '../../support/fake-clock.js';

const BODY = JSON.stringify({ success: true, results: [{ email: 'a@example.com', isValid: true, status: 'valid', confidence: 0.9 }] });

/** A latch the test opens. */
function latch(): { wait: Promise<void>; open(): void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

interface Held {
  url: string;
  /** a request arrived */
  arrived: Promise<void>;
  /** send the headers (with these rate-limit headers) */
  headers: { open(): void };
  /** send the body */
  body: { open(): void };
  close(): Promise<void>;
}

/** One request at a time, answered in the steps the test allows. */
async function heldServer(rateHeaders: Record<string, string>): Promise<Held> {
  const arrived = latch();
  const headers = latch();
  const body = latch();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', async () => {
      arrived.open();
      await headers.wait;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(BODY), ...rateHeaders });
      res.flushHeaders();
      await body.wait;
      res.end(BODY);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrived: arrived.wait,
    headers,
    body,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

let cleanUp: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanUp.reverse()) await f();
  cleanUp = [];
});

/** A pool that tells when an answer's headers have come (the test's condition to wait on, not a sleep). */
function watchedPool(url: string): { pool: Dispatcher; headersSeen: Promise<void> } {
  const seen = latch();
  const pool = new Pool(url).compose((dispatch) => (opts, handler) =>
    dispatch(opts, {
      onRequestStart: (controller, context) => handler.onRequestStart?.(controller, context),
      onResponseStart: (controller, statusCode, headers, statusMessage) => {
        handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
        seen.open();
      },
      onResponseData: (controller, chunk) => handler.onResponseData?.(controller, chunk),
      onResponseEnd: (controller, trailers) => handler.onResponseEnd?.(controller, trailers),
      onResponseError: (controller, error) => handler.onResponseError?.(controller, error),
    }),
  );
  cleanUp.push(() => pool.close());
  return { pool, headersSeen: seen.wait };
}

describe('a reset told in seconds is timed from the request\'s send', () => {
  // It was added to the moment the answer was read: each window opened one answer's
  // latency late (1.17-1.18× the ideal at 20 per 2 s with 300 ms latency in `npm run bench pacing`).
  it.each([
    ['draft-7 RateLimit', { ratelimit: 'limit=20, remaining=0, reset=2', 'ratelimit-policy': '20;w=2' }],
    ['draft-6 RateLimit-Reset', { 'ratelimit-limit': '20', 'ratelimit-remaining': '0', 'ratelimit-reset': '2' }],
    ['draft-8 RateLimit', { ratelimit: '"20-in-2sec"; r=0; t=2', 'ratelimit-policy': '"20-in-2sec"; q=20; w=2; pk=:YWJj:' }],
    ["fastify's X-RateLimit-Reset in seconds", { 'x-ratelimit-limit': '20', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '2' }],
  ])('%s: an answer 300 ms late does not make the next request wait 300 ms longer', async (_name, rateHeaders) => {
    const server = await heldServer(rateHeaders);
    cleanUp.push(server.close);
    const clock = new FakeClock();
    const sent = clock.now();
    const http = new ApiHttp({ baseUrl: server.url, apiKey: 'k', timeoutMs: 10_000, concurrency: 1 }, clock);
    cleanUp.push(() => http.close());
    const waits: (number | undefined)[] = [];
    const caller = new Caller(http, { retries: 0, concurrency: 1, clock, onRateLimitWait: (until) => waits.push(until) });
    const first = caller.call('/api/validate/bulk', { emails: ['a@example.com'] }, normalizeBulk, new AbortController().signal);
    await server.arrived;
    clock.t += 300; // the API's own time, after its limiter counted the request
    server.headers.open();
    server.body.open();
    expect((await first).kind).toBe('ok');
    // none left in the window: the next request waits for the reset, 2 s after the first left (and a 20 ms margin)
    const stop = new AbortController();
    const second = caller.call('/api/validate/bulk', { emails: ['b@example.com'] }, normalizeBulk, stop.signal).catch(() => 'stopped');
    await flush();
    expect(waits.filter((w) => w !== undefined)).toEqual([sent + 2000 + 20]);
    stop.abort();
    expect(await second).toBe('stopped');
  });
});

describe('the round trip the adaptive limit reads ends at the first byte of the answer', () => {
  // It ended after the body was read and parsed: a busy client's event loop was read as a
  // queue at the server ("answers at 534 ms (fastest 12 ms): about 5 waiting at the server").
  it('an answer whose headers come in 40 ms and whose body takes 500 ms more is a 40 ms round trip', async () => {
    const server = await heldServer({});
    cleanUp.push(server.close);
    const { pool, headersSeen } = watchedPool(server.url);
    const clock = new FakeClock();
    const http = new ApiHttp({ baseUrl: server.url, apiKey: 'k', timeoutMs: 10_000, concurrency: 1, dispatcher: pool }, clock);
    const changes: LimitChange[] = [];
    const caller = new Caller(http, { retries: 0, concurrency: 'auto', clock, onConcurrencyChange: (c) => changes.push(c) });
    const call = caller.call('/api/validate/bulk', { emails: ['a@example.com'] }, normalizeBulk, new AbortController().signal);
    await server.arrived;
    clock.t += 40;
    server.headers.open();
    await headersSeen;
    await flush(); // the client reads the headers before the clock moves on
    clock.t += 500; // the body read and parsed by a busy process
    server.body.open();
    expect((await call).kind).toBe('ok');
    expect(changes).toEqual([{ from: 1, to: 2, reason: 'answers at 40 ms (fastest 40 ms): no queue yet, doubling' }]);
  });
});
