import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorVerdict, type Verdict } from '../verdict.js';
import { bulkEmails, isJsonContentType, parseJsonObject, readBody, singleEmail } from './body.js';
import { bearerToken, type KeyStore } from './keys.js';
import type { ServeMetrics } from './metrics.js';
import type { FixedWindowLimiter, RateDecision } from './rate-limit.js';
import { apiError, bulkBody, errorBody, singleBody, type ApiError, type Shape } from './render.js';
import { networkOf } from './client-network.js';
import { stopwatch } from '../time/clock.js';

/** The part of the offline engine that serve needs; tests may pass their own. */
export interface ServeEngine {
  validate(emails: readonly string[], signal: AbortSignal): Promise<Verdict[]>;
  validateOne(email: string, signal?: AbortSignal): Promise<Verdict>;
}

export interface HandlerContext {
  keys: KeyStore;
  limiter: FixedWindowLimiter;
  shape: Shape;
  engine: ServeEngine;
  bodyLimitBytes: number;
  /** true once shutdown began: responses then close their connection */
  closing: () => boolean;
  onLog: (line: string) => void;
  /** set with --metrics: counts every answer, and serves GET /metrics */
  metrics?: ServeMetrics;
  /** what GET /readyz reports about the shared store */
  redisState?: () => 'connected' | 'unreachable';
  /** what GET /readyz reports about the mailbox check */
  smtpState?: () => 'ok' | 'blocked' | 'off';
  /** what GET /readyz reports about DNS (asking also lets the engine test it again while unusable) */
  dnsState?: () => 'ok' | 'unusable' | 'off';
}

const ROUTES = new Set(['/api/validate', '/api/validate/bulk']);
/** answered without a key and outside the rate limit, for load balancers and monitoring */
const PROBES = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * The path of a request target: origin-form (`/api/validate?x`) or, as a
 * server must accept (RFC 9112 §3.2.2), absolute-form (`http://host/api/validate`),
 * which proxies send. Anything else (`*`, authority-form, junk) matches no route.
 */
export function targetPath(target: string | undefined): string {
  const t = target ?? '/';
  if (t.startsWith('/')) return t.split('?')[0]!;
  if (/^https?:\/\//i.test(t)) {
    try {
      return new URL(t).pathname;
    } catch {
      // unparseable: no route
    }
  }
  return '';
}

/** the route label of metrics: one of ours, or "other" (never the client's own path) */
function routeOf(path: string): string {
  return ROUTES.has(path) || PROBES.has(path) ? path : 'other';
}

// Past this much of an oversize body we stop politely discarding and hang up.
const DISCARD_LIMIT = 8 * 1024 * 1024;

export function rateHeaders(d: RateDecision): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(d.limit),
    'X-RateLimit-Remaining': String(d.remaining),
    'X-RateLimit-Reset': String(d.resetEpochSeconds),
  };
}

/** Headers set earlier on `res` (the rate-limit ones, Allow, Retry-After) are kept. */
export function sendJson(res: ServerResponse, status: number, body: unknown, closing: boolean): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(text)),
    ...(closing ? { Connection: 'close' } : {}),
  });
  res.end(text);
}

/**
 * The access-log line: method, path, status, addresses, milliseconds. The path
 * is logged only when it is one of ours, since an unknown path or a query string
 * could carry an address or a key.
 */
export function accessLine(method: string, path: string, status: number | undefined, addresses: number, ms: number, aborted: boolean): string {
  const shown = ROUTES.has(path) || PROBES.has(path) ? path : '[other path]';
  return `${method} ${shown} ${status ?? '-'} addresses=${addresses} ${ms.toFixed(1)}ms${aborted ? ' (client went away)' : ''}`;
}

export function createHandler(ctx: HandlerContext): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const took = stopwatch();
    const path = targetPath(req.url);
    const state = { addresses: 0 };
    const abort = new AbortController();
    res.on('close', () => {
      const aborted = !res.writableFinished;
      if (aborted) abort.abort();
      const status = res.headersSent ? res.statusCode : undefined;
      const ms = took();
      ctx.metrics?.request(routeOf(path), status, ms / 1000);
      // a load balancer's probe every few seconds would drown the log
      if (PROBES.has(path) && status === 200) return;
      ctx.onLog(accessLine(req.method ?? '?', path, status, state.addresses, ms, aborted));
    });
    if (PROBES.has(path) && (path !== '/metrics' || ctx.metrics)) {
      probe(ctx, req, res, path).catch(() => {
        sendJson(res, 500, errorBody(apiError(500, 'SERVER_ERROR', 'An error occurred in the service', 'The probe failed')), true);
      });
      return;
    }
    handle(ctx, req, res, path, state, abort.signal, took).catch(() => {
      // The engine (or we) failed; the caller gets a 500, never a crash.
      fail(ctx, req, res, apiError(500, 'SERVER_ERROR', 'An error occurred in the service', 'The validation engine failed'));
    });
  };
}

/**
 * A request without a valid key, counted against its address and its network
 * in one step (two separate counts let concurrent requests pass in different
 * orders: one over the limit in either was refused, fewer than the limit got
 * through, and two told the same Remaining): refused when either is over the
 * limit; the headers tell the fuller count.
 */
function takeAnonymous(ctx: HandlerContext, address: string): Promise<RateDecision> {
  const network = networkOf(address);
  return network === undefined ? ctx.limiter.take(`ip:${address}`) : ctx.limiter.take(`ip:${address}`, `net:${network}`);
}

/**
 * Answers with an error object; the X-RateLimit-* headers are already on `res`.
 * A refused request whose unread body may be large gets its connection closed
 * rather than read to the end.
 */
function fail(ctx: HandlerContext, req: IncomingMessage, res: ServerResponse, e: ApiError): void {
  const declared = Number(req.headers['content-length']);
  const hasBody = req.headers['transfer-encoding'] !== undefined || declared > 0;
  const unbounded = hasBody && !req.complete && !(declared <= ctx.bodyLimitBytes);
  if (unbounded) discardRest(req);
  sendJson(res, e.status, errorBody(e), ctx.closing() || unbounded);
}

async function handle(
  ctx: HandlerContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  state: { addresses: number },
  signal: AbortSignal,
  took: () => number,
): Promise<void> {
  // Requests with a valid key count against that key; the others against their
  // IP address and its network (a /24, a /64), so that guessing keys is
  // throttled too, from one address or from many of one network.
  const token = bearerToken(req.headers.authorization);
  const identity = token === undefined ? undefined : ctx.keys.identify(token);
  const decision = identity ? await ctx.limiter.take(`key:${identity}`) : await takeAnonymous(ctx, req.socket.remoteAddress ?? '?');
  for (const [name, value] of Object.entries(rateHeaders(decision))) res.setHeader(name, value);

  if (!decision.allowed) {
    ctx.metrics?.refused(identity ? 'key' : 'ip');
    res.setHeader('Retry-After', String(decision.retryAfterSeconds));
    return fail(ctx, req, res, apiError(429, 'RATE_LIMITED', 'The rate limit is exceeded', `Retry after ${decision.retryAfterSeconds} s`));
  }
  if (!ROUTES.has(path)) {
    return fail(ctx, req, res, apiError(404, 'NOT_FOUND', 'No such endpoint', 'Use POST /api/validate or POST /api/validate/bulk'));
  }
  if (req.method !== 'POST') {
    res.setHeader('Allow', 'POST');
    return fail(ctx, req, res, apiError(405, 'METHOD_NOT_ALLOWED', `Method ${req.method} is not allowed`, 'This endpoint takes POST'));
  }
  if (!identity) {
    const why = token === undefined ? 'Send the header Authorization: Bearer <API_KEY>' : 'The API key is not valid';
    return fail(ctx, req, res, apiError(401, 'UNAUTHORIZED', 'The API key is missing or invalid', why));
  }
  if (!isJsonContentType(req.headers['content-type'])) {
    return fail(
      ctx,
      req,
      res,
      apiError(400, 'INVALID_REQUEST', 'Content-Type must be application/json', 'Send a JSON body with Content-Type: application/json'),
    );
  }

  const body = await readBody(req, ctx.bodyLimitBytes);
  if (!body.ok) {
    if (body.error.status === 413) discardRest(req);
    return sendJson(res, body.error.status, errorBody(body.error), true);
  }
  const parsed = parseJsonObject(body.body);
  if (!parsed.ok) return fail(ctx, req, res, parsed.error);

  if (path === '/api/validate') {
    const one = singleEmail(parsed.value);
    if (!one.ok) return fail(ctx, req, res, one.error);
    state.addresses = 1;
    const verdict = await ctx.engine.validateOne(one.email, signal);
    ctx.metrics?.verdicts([verdict]);
    if (verdict.details.syntax === false) {
      return fail(ctx, req, res, apiError(400, 'INVALID_EMAIL', 'The email address is not valid', 'Email format validation failed'));
    }
    return sendJson(res, 200, singleBody(ctx.shape, verdict, took()), ctx.closing());
  }

  const bulk = bulkEmails(parsed.value);
  if (!bulk.ok) return fail(ctx, req, res, bulk.error);
  state.addresses = bulk.emails.length;
  const verdicts = await validateBulk(ctx.engine, bulk.emails, signal);
  ctx.metrics?.verdicts(verdicts);
  return sendJson(res, 200, bulkBody(ctx.shape, verdicts), ctx.closing());
}

/**
 * GET /healthz: the process answers. GET /readyz: whether to send it traffic,
 * 503 once it is draining, and 503 `unavailable` while DNS is unusable (every
 * answer that needs DNS would be undetermined; DNS is asked again meanwhile,
 * so the instance comes back by itself); with --redis the body says whether the
 * shared store answers, with --smtp whether outbound SMTP works (`smtp:
 * blocked` while it is judged blocked; it is tried again later) — "degraded"
 * is still 200, since every instance loses Redis at once and a load balancer
 * that dropped them all would turn a Redis blip into an outage; `?strict`
 * makes it 503 for those who want that. GET /metrics: the Prometheus text format.
 */
async function probe(ctx: HandlerContext, req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    return fail(ctx, req, res, apiError(405, 'METHOD_NOT_ALLOWED', `Method ${req.method} is not allowed`, 'This endpoint takes GET'));
  }
  req.resume();
  res.setHeader('Cache-Control', 'no-store');
  if (path === '/metrics') {
    const { contentType, body } = await ctx.metrics!.text();
    res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': String(Buffer.byteLength(body)), ...(ctx.closing() ? { Connection: 'close' } : {}) });
    res.end(req.method === 'HEAD' ? undefined : body);
    return;
  }
  if (path === '/healthz') return sendJson(res, 200, { status: 'ok' }, ctx.closing());
  const redis = ctx.redisState?.() ?? 'not configured';
  const smtp = ctx.smtpState?.();
  const dns = ctx.dnsState?.();
  // outbound SMTP judged blocked (tried again later): requests are still answered, from DNS and the lists
  const degraded = redis === 'unreachable' || smtp === 'blocked';
  const status = ctx.closing() ? 'draining' : dns === 'unusable' ? 'unavailable' : degraded ? 'degraded' : 'ready';
  const strict = /[?&]strict(=|&|$)/.test(req.url ?? '');
  const code = status === 'draining' || status === 'unavailable' || (status === 'degraded' && strict) ? 503 : 200;
  const body = { status, redis, ...(smtp && smtp !== 'off' ? { smtp } : {}), ...(dns && dns !== 'off' ? { dns } : {}) };
  return sendJson(res, code, body, ctx.closing());
}

/**
 * The engine takes distinct addresses; a request may repeat one. Answers come
 * back in request order, one per requested entry, matched by address.
 */
async function validateBulk(engine: ServeEngine, emails: readonly string[], signal: AbortSignal): Promise<Verdict[]> {
  const distinct = [...new Set(emails)];
  const byEmail = new Map<string, Verdict>();
  for (const v of await engine.validate(distinct, signal)) byEmail.set(v.email, v);
  return emails.map((email) => byEmail.get(email) ?? errorVerdict(email, 'MISSING_RESULT', 'the engine gave no verdict for this address'));
}

/** Lets the client finish sending (so it reads our 413), but only up to a bound. */
function discardRest(req: IncomingMessage): void {
  let discarded = 0;
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > DISCARD_LIMIT) req.socket.destroy();
  });
  req.resume();
}
