import { systemClock, type Clock } from '../time/clock.js';
import { createServer as createHttpServer, STATUS_CODES, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { accessLine, createHandler, rateHeaders, type ServeEngine } from './handler.js';
import { KeyStore } from './keys.js';
import type { ServeMetrics } from './metrics.js';
import { FixedWindowLimiter, type RateLimit, type RateLimitStore } from './rate-limit.js';
import { errorBody, apiError, type Shape } from './render.js';

export interface ServeOptions {
  host: string;
  /** 0 picks any free port; the chosen one is in the returned url */
  port: number;
  /** accepted API keys (plain text; held only as hashes) */
  keys: readonly string[];
  rateLimit: RateLimit;
  shape: Shape;
  engine: ServeEngine;
  /** PEM certificate and key: serve HTTPS */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** default 1 MiB: far above 1000 addresses of 254 characters */
  bodyLimitBytes?: number;
  /** one line per request, no keys or addresses; default: dropped */
  onLog?: (line: string) => void;
  /** the clock of the rate limiter and the drain timeout (a fake one in tests) */
  clock?: Clock;
  /** how long close() waits for requests in flight before cutting them; default 10 s */
  drainTimeoutMs?: number;
  /** where the rate-limit windows are counted; default: this process's memory */
  rateLimitStore?: RateLimitStore;
  /** counts requests and serves GET /metrics */
  metrics?: ServeMetrics;
  /** the shared store's state, for GET /readyz (serve --redis) */
  redisState?: () => 'connected' | 'unreachable';
  /** the mailbox check's state, for GET /readyz (serve --smtp) */
  smtpState?: () => 'ok' | 'blocked' | 'off';
  /** DNS's state, for GET /readyz: not ready while it is unusable */
  dnsState?: () => 'ok' | 'unusable' | 'off';
}

export interface RunningServer {
  url: string;
  /** Stops accepting, lets requests in flight finish (up to the drain timeout), then resolves. */
  close(): Promise<void>;
}

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const keys = new KeyStore(options.keys);
  const limiter = new FixedWindowLimiter(options.rateLimit, options.clock, options.rateLimitStore);
  const onLog = options.onLog ?? (() => {});
  let closing = false;
  const handler = createHandler({
    keys,
    limiter,
    shape: options.shape,
    engine: options.engine,
    bodyLimitBytes: options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT,
    closing: () => closing,
    onLog,
    metrics: options.metrics,
    redisState: options.redisState,
    smtpState: options.smtpState,
    dnsState: options.dnsState,
  });
  const server: Server = options.tls ? createHttpsServer({ cert: options.tls.cert, key: options.tls.key }, handler) : createHttpServer(handler);
  // Slow clients must not hold a connection (and a drain) open for long.
  server.headersTimeout = 10_000;
  server.requestTimeout = 60_000;

  // Requests node cannot even parse still get an error object and the headers.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // A client gone mid-request (EOF, reset) is logged by its request, if any; nobody is left to answer.
    if (!socket.writable || err.code === 'ECONNRESET' || err.code === 'HPE_INVALID_EOF_STATE') {
      socket.destroy();
      return;
    }
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    void limiter.take(`ip:${socket.remoteAddress ?? '?'}`).then((decision) => {
      if (!socket.writable) return void socket.destroy();
      const body = JSON.stringify(errorBody(apiError(status, 'INVALID_REQUEST', 'The HTTP request is malformed', STATUS_CODES[status] ?? '')));
      const head = Object.entries({
        ...rateHeaders(decision),
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': String(Buffer.byteLength(body)),
        Connection: 'close',
      })
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('');
      socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${head}\r\n${body}`);
      options.metrics?.request('other', status, 0);
      onLog(accessLine('-', '', status, 0, 0, false));
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  const url = `${options.tls ? 'https' : 'http'}://${host}:${port}`;

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= new Promise<void>((resolve) => {
      closing = true;
      server.close(() => resolve());
      // Keep-alive connections waiting for a next request would hold close() open;
      // busy ones close after their response, which then says Connection: close.
      server.closeIdleConnections();
      (options.clock ?? systemClock).setTimer(() => server.closeAllConnections(), options.drainTimeoutMs ?? 10_000, { ref: false });
    });
    return closed;
  };
  return { url, close };
}
