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

/** One request the server holds: it answers in the steps the test allows. */
interface HeldRequest {
  /** send the headers */
  headers: { open(): void };
  /** send the body */
  body: { open(): void };
}

interface Held {
  url: string;
  /** the next request to arrive */
  next(): Promise<HeldRequest>;
  close(): Promise<void>;
}

/** Holds each request; the n-th (from 0) is answered with `rateHeaders(n)`. */
async function heldServer(rateHeaders: (n: number) => Record<string, string>): Promise<Held> {
  const arrivals: HeldRequest[] = [];
  const waiting: ((r: HeldRequest) => void)[] = [];
  let count = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', async () => {
      const n = count++;
      const held = { headers: latch(), body: latch() };
      const taker = waiting.shift();
      if (taker) taker(held);
      else arrivals.push(held);
      await held.headers.wait;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(BODY), ...rateHeaders(n) });
      res.flushHeaders();
      await held.body.wait;
      res.end(BODY);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    next: () => {
      const first = arrivals.shift();
      return first ? Promise.resolve(first) : new Promise((resolve) => waiting.push(resolve));
    },
    close: () =>
      new Promise((resolve) => {
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
  const pool = new Pool(url).compose(
    (dispatch) => (opts, handler) =>
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

describe("a reset told in seconds is timed from the request's send", () => {
  // It was added to the moment the answer was read: each window opened one answer's
  // latency late (1.17-1.18× the ideal at 20 per 2 s with 300 ms latency in `npm run bench pacing`).
  it.each([
    ['draft-7 RateLimit', (r: number) => ({ ratelimit: `limit=20, remaining=${r}, reset=2`, 'ratelimit-policy': '20;w=2' })],
    ['draft-6 RateLimit-Reset', (r: number) => ({ 'ratelimit-limit': '20', 'ratelimit-remaining': String(r), 'ratelimit-reset': '2' })],
    ['draft-8 RateLimit', (r: number) => ({ ratelimit: `"20-in-2sec"; r=${r}; t=2`, 'ratelimit-policy': '"20-in-2sec"; q=20; w=2; pk=:YWJj:' })],
    ["fastify's X-RateLimit-Reset in seconds", (r: number) => ({ 'x-ratelimit-limit': '20', 'x-ratelimit-remaining': String(r), 'x-ratelimit-reset': '2' })],
  ])('%s: answers 300 ms after the count do not make the next window wait 300 ms longer', async (_name, rateHeaders) => {
    // windows of 20 requests, all sent at the window's start and answered 300 ms after the
    // limiter counted them: the n-th answer of a window tells 19 - n left, and the reset in 2 s
    const server = await heldServer((n) => rateHeaders(19 - (n % 20)));
    cleanUp.push(server.close);
    const clock = new FakeClock();
    const http = new ApiHttp({ baseUrl: server.url, apiKey: 'k', timeoutMs: 10_000, concurrency: 20 }, clock);
    cleanUp.push(() => http.close());
    const waits: number[] = [];
    const caller = new Caller(http, { retries: 0, concurrency: 20, clock, onRateLimitWait: (until) => until !== undefined && waits.push(until) });
    const send = (n: number, signal = new AbortController().signal) =>
      Array.from({ length: n }, (_, i) => caller.call('/api/validate/bulk', { emails: [`u${i}@example.com`] }, normalizeBulk, signal));
    /** `n` requests reach the server; 300 ms later their answers leave it */
    const answer = async (calls: Promise<unknown>[]) => {
      const held = [];
      for (let i = 0; i < calls.length; i++) held.push(await server.next());
      clock.t += 300;
      for (const h of held) {
        h.headers.open();
        h.body.open();
      }
      for (const c of await Promise.all(calls)) expect((c as { kind: string }).kind).toBe('ok');
    };
    // the first window: one request alone until the API has answered, then the 19 others
    await answer(send(1));
    await answer(send(19));
    // the second: its 20 wait for the first window's reset, then leave together
    const second = send(20);
    await flush();
    await clock.advance(waits.at(-1)! - clock.now());
    const sent = clock.now();
    await answer(second);
    // The third waits for the second's reset: 2 s after its requests left (and the 20 ms margin,
    // and room for how much the answers' times vary: here not at all), not 2 s after the answers.
    const stop = new AbortController();
    const third = send(1, stop.signal)[0]!.catch(() => 'stopped');
    await flush();
    expect(waits.at(-1)).toBeGreaterThanOrEqual(sent + 2000 + 20);
    expect(waits.at(-1)).toBeLessThan(sent + 2000 + 20 + 50);
    stop.abort();
    expect(await third).toBe('stopped');
  });
});

describe('the round trip the adaptive limit reads ends at the first byte of the answer', () => {
  // It ended after the body was read and parsed: a busy client's event loop was read as a
  // queue at the server ("answers at 534 ms (fastest 12 ms): about 5 waiting at the server").
  it('an answer whose headers come in 40 ms and whose body takes 500 ms more is a 40 ms round trip', async () => {
    const server = await heldServer(() => ({}));
    cleanUp.push(server.close);
    const { pool, headersSeen } = watchedPool(server.url);
    const clock = new FakeClock();
    const http = new ApiHttp({ baseUrl: server.url, apiKey: 'k', timeoutMs: 10_000, concurrency: 1, dispatcher: pool }, clock);
    const changes: LimitChange[] = [];
    const caller = new Caller(http, { retries: 0, concurrency: 'auto', clock, onConcurrencyChange: (c) => changes.push(c) });
    const call = caller.call('/api/validate/bulk', { emails: ['a@example.com'] }, normalizeBulk, new AbortController().signal);
    const held = await server.next();
    clock.t += 40;
    held.headers.open();
    await headersSeen;
    await flush(); // the client reads the headers before the clock moves on
    clock.t += 500; // the body read and parsed by a busy process
    held.body.open();
    expect((await call).kind).toBe('ok');
    expect(changes).toEqual([{ from: 1, to: 2, reason: 'answers at 40 ms (fastest 40 ms): no queue yet, doubling' }]);
  });
});
