import type { Dispatcher } from 'undici';
import type { ErrorCode } from '../../verdict.js';
import { API_TEXT_CAPS, cleanText, redactKey, redactKeyBytes } from './api-text.js';
import { systemClock, type Clock } from '../../time/clock.js';
import { apiDispatcher } from './proxy.js';
import type { Failure } from '../failure.js';
import { networkFailure } from './failure.js';
import { ClockSkew, parseRateLimitHeaders, type RateLimitInfo } from './rate-limit-headers.js';
import { parseJsonBody, parseText } from './json-body.js';
import { timeoutSignal } from '../../time/waits.js';

export interface HttpConfig {
  /** scheme and host, e.g. https://api.example.com */
  baseUrl: string;
  /** never logged, never part of an error */
  apiKey: string;
  timeoutMs: number;
  concurrency: number;
  /**
   * an undici Dispatcher (an Agent, a ProxyAgent) to send through; typed as an
   * object so that the library's published types do not need undici's, which
   * is bundled into mailsift rather than installed beside it
   */
  dispatcher?: object;
  /** --verbose: one line per request and per answer (the key shown redacted) */
  log?: (line: string) => void;
}

/** One HTTP exchange, classified by what a client can do about it (401/403 stop, 429 waits, 408/425/5xx retry, other 4xx are the request's fault). */
export type Attempt =
  | { kind: 'ok'; body: unknown }
  | { kind: 'auth'; status: number }
  | { kind: 'rate-limited' }
  | { kind: 'too-large' }
  | { kind: 'bad-address' }
  | { kind: 'request-error'; status: number; code: string | undefined; failure?: Failure }
  | { kind: 'retryable'; code: ErrorCode; detail: string; failure?: Failure };

export interface Exchange {
  attempt: Attempt;
  /** an HTTP response arrived (its headers were read) */
  answered: boolean;
  /** what the headers said about the rate limit, errors included */
  info: RateLimitInfo;
  /** the HTTP status, when a whole answer arrived */
  status?: number;
  /**
   * sent to the first byte of the answer (its headers arrived), in ms: the
   * server's time and the network's, not the time this process took to read
   * and parse the body
   */
  firstByteMs?: number;
}

/** Called with the clock's reading when a request is written to its connection. */
type OnWritten = (at: number) => void;

/**
 * Tells when each request is written, connection made: undici calls
 * onRequestStart just before it writes the request to a socket. A request
 * that waited for a new connection (a TCP or TLS handshake, tens of ms under
 * load) reaches the server that much later than `request()` was called; timed
 * from the call, a reset told in seconds would look that much early, and the
 * next window's requests would arrive before it (a 429 seen at every window's
 * edge on a loaded machine).
 */
function writeTiming(clock: Clock, notes: WeakMap<object, OnWritten>): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (opts, handler) => {
    const note = notes.get(opts);
    if (!note) return dispatch(opts, handler);
    return dispatch(opts, {
      onRequestStart: (controller, context) => {
        note(clock.now());
        handler.onRequestStart?.(controller, context);
      },
      onRequestUpgrade: (controller, statusCode, headers, socket) => handler.onRequestUpgrade?.(controller, statusCode, headers, socket),
      onResponseStart: (controller, statusCode, headers, statusMessage) => handler.onResponseStart?.(controller, statusCode, headers, statusMessage),
      onResponseData: (controller, chunk) => handler.onResponseData?.(controller, chunk),
      onResponseEnd: (controller, trailers) => handler.onResponseEnd?.(controller, trailers),
      onResponseError: (controller, error) => handler.onResponseError?.(controller, error),
    });
  };
}

/** JSON over one keep-alive pool; every outcome comes back as data, never thrown (but aborts). */
export class ApiHttp {
  private readonly dispatcher: Dispatcher;
  /** the dispatcher requests go through: the same, telling when each is written */
  private readonly timed: Dispatcher;
  private readonly written = new WeakMap<object, OnWritten>();
  private readonly ownsDispatcher: boolean;
  private readonly prefix: string;
  private readonly origin: string;
  private readonly skew = new ClockSkew();
  /** the fastest answer's first byte so far, ms */
  private fastestFirstByte = Infinity;
  /** how much the first byte varies: RFC 6298's SRTT and RTTVAR, over first bytes */
  private smoothedFirstByte: number | undefined;
  private firstByteVariation = 0;

  constructor(
    private readonly config: HttpConfig,
    private readonly clock: Clock = systemClock,
  ) {
    const url = new URL(config.baseUrl);
    this.origin = url.origin;
    this.prefix = url.pathname.replace(/\/+$/, '');
    this.ownsDispatcher = !config.dispatcher;
    this.dispatcher = (config.dispatcher as Dispatcher | undefined) ?? apiDispatcher(this.origin, config.concurrency);
    // a dispatcher of the library's user that cannot be composed is used as it is: requests timed from the call
    this.timed = typeof this.dispatcher.compose === 'function' ? this.dispatcher.compose(writeTiming(clock, this.written)) : this.dispatcher;
  }

  async post(path: string, payload: unknown, signal: AbortSignal): Promise<Exchange> {
    // --timeout bounds the whole exchange, body included; undici's own timeouts
    // only measure silences. Unref'd, as AbortSignal.timeout is.
    const [timeout, cancel] = timeoutSignal(this.clock, this.config.timeoutMs, { ref: false });
    try {
      return await this.exchange(path, payload, signal, timeout);
    } finally {
      cancel();
    }
  }

  private async exchange(path: string, payload: unknown, signal: AbortSignal, timeout: AbortSignal): Promise<Exchange> {
    const url = new URL(this.origin + this.prefix + path);
    const { apiKey } = this.config;
    // every line, the server's words included, without the key (see redactKey)
    const log = this.config.log && ((line: string) => this.config.log!(redactKey(line, apiKey)));
    const count = (payload as { emails?: unknown[] }).emails?.length ?? 1;
    log?.(`> POST ${url.href} (${count} ${count === 1 ? 'address' : 'addresses'}) authorization: Bearer [redacted]`);
    const both = AbortSignal.any([signal, timeout]);
    const body = JSON.stringify(payload);
    // Resets told as "in N seconds" count from when the request left: the server cannot have
    // counted it earlier. That is when it is written to its connection (writeTiming).
    const calledAt = this.clock.now();
    let sentAt = calledAt;
    const failed = (err: unknown, answered: boolean, info: RateLimitInfo = { policies: [] }, firstByteMs?: number): Exchange => {
      if (signal.aborted) throw signal.reason ?? err;
      const failure = networkFailure(err, timeout.aborted, { url, method: 'POST', timeoutMs: this.config.timeoutMs });
      log?.(`< ${failure.text} after ${this.clock.now() - calledAt} ms`);
      const code = failure.kind === 'timeout' ? 'TIMEOUT' : 'NETWORK';
      const exchange: Exchange = { attempt: { kind: 'retryable', code, detail: failure.text, failure }, answered, info };
      if (firstByteMs !== undefined) exchange.firstByteMs = firstByteMs;
      return exchange;
    };
    let res: Dispatcher.ResponseData;
    const options: Dispatcher.RequestOptions = {
      origin: this.origin,
      path: this.prefix + path,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        authorization: `Bearer ${this.config.apiKey}`,
      },
      body,
      headersTimeout: this.config.timeoutMs,
      bodyTimeout: this.config.timeoutMs,
      signal: both,
    };
    this.written.set(options, (at) => (sentAt = at));
    try {
      res = await this.timed.request(options);
    } catch (err) {
      return failed(err, false);
    }
    const headersAt = this.clock.now();
    const firstByteMs = headersAt - sentAt;
    const countedAt = this.latestCount(headersAt, firstByteMs);
    const info = parseRateLimitHeaders(res.headers, headersAt, { sentAt, countedAt, skew: this.skew });
    let bytes: Uint8Array;
    try {
      bytes = await res.body.bytes();
    } catch (err) {
      // socket closed mid-body: the headers still count for the rate limit
      return failed(err, true, info, firstByteMs);
    }
    // read as bytes, not text: a bulk answer is parsed in pieces (see parseJsonBody); whatever of
    // it is kept (an address's error message, its provider) is kept without the key
    bytes = redactKeyBytes(bytes, apiKey);
    const attempt = withoutKey(describeStatus(classifyBody(res.statusCode, parseJsonBody(bytes)), res.statusCode, url), apiKey);
    if (log)
      log(`< HTTP ${res.statusCode} ${url.href} in ${this.clock.now() - calledAt} ms${answerNote(res.headers, attempt, Buffer.from(bytes).toString('utf8'))}`);
    return { attempt, answered: true, info, status: res.statusCode, firstByteMs };
  }

  /**
   * The latest moment the server can have counted a request whose headers came
   * at `headersAt`: a reset told in seconds counts from there. The fastest
   * round trip is a floor of the way there and back, so the count came no
   * later than `headersAt` less it; a request slower than that may have spent
   * the extra before the server counted it (a loaded machine, a queue in
   * front of the limiter), and the next request may reach the server faster
   * than this one did by as much as round trips vary: four times their mean
   * deviation, RFC 6298's allowance (a few ms on a quiet loopback, 100 ms and
   * more on a loaded machine, where timing from the send alone drew a 429 at a
   * window's edge now and then). Never later than the answer itself.
   */
  private latestCount(headersAt: number, firstByteMs: number): number {
    this.fastestFirstByte = Math.min(this.fastestFirstByte, firstByteMs);
    if (this.smoothedFirstByte === undefined) {
      this.smoothedFirstByte = firstByteMs;
      this.firstByteVariation = firstByteMs / 2;
    } else {
      this.firstByteVariation += (Math.abs(this.smoothedFirstByte - firstByteMs) - this.firstByteVariation) / 4;
      this.smoothedFirstByte += (firstByteMs - this.smoothedFirstByte) / 8;
    }
    return Math.min(headersAt, headersAt - this.fastestFirstByte + 4 * this.firstByteVariation);
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }
}

export function classify(status: number, text: string): Attempt {
  return classifyBody(status, parseText(text));
}

/** classify() of a body already parsed (undefined: not JSON). */
function classifyBody(status: number, body: unknown): Attempt {
  const code = errorCodeOf(body);
  if (status >= 200 && status < 300) {
    return body === undefined ? { kind: 'retryable', code: 'SERVER_ERROR', detail: 'malformed JSON in the response' } : { kind: 'ok', body };
  }
  if (status === 401 || status === 403) return { kind: 'auth', status };
  if (status === 429) return { kind: 'rate-limited' };
  if (status === 413 || code === 'TOO_MANY_EMAILS') return { kind: 'too-large' };
  if (status === 400 && code === 'INVALID_EMAIL') return { kind: 'bad-address' };
  if (status === 408 || status === 425 || status >= 500) {
    return { kind: 'retryable', code: status === 408 ? 'TIMEOUT' : 'SERVER_ERROR', detail: `HTTP ${status}${code ? ` ${code}` : ''}` };
  }
  return { kind: 'request-error', status, code };
}

/** Adds what the user needs to fix a refused request: the status and the URL it went to. */
function describeStatus(attempt: Attempt, status: number, url: URL): Attempt {
  if (attempt.kind === 'request-error') {
    const code = attempt.code ? ` ${attempt.code}` : '';
    return { ...attempt, failure: { kind: 'http', status, text: `HTTP ${status}${code} for POST ${url.href}` } };
  }
  if (attempt.kind === 'retryable') {
    const what = status >= 200 && status < 300 ? `an unreadable answer (HTTP ${status}, not JSON)` : attempt.detail;
    return { ...attempt, failure: { kind: 'server', text: `${what} from POST ${url.href}` } };
  }
  return attempt;
}

/** The texts of an attempt taken from the server's answer (its error code), without the key: they are printed and kept in the summary. */
function withoutKey(attempt: Attempt, key: string): Attempt {
  if (attempt.kind === 'request-error' || attempt.kind === 'retryable') {
    const texts = JSON.stringify(attempt);
    if (!texts.includes(key) && !texts.includes(encodeURIComponent(key))) return attempt;
    const failure = attempt.failure && { ...attempt.failure, text: redactKey(attempt.failure.text, key) };
    if (attempt.kind === 'request-error') return { ...attempt, code: attempt.code && redactKey(attempt.code, key), ...(failure ? { failure } : {}) };
    return { ...attempt, detail: redactKey(attempt.detail, key), ...(failure ? { failure } : {}) };
  }
  return attempt;
}

/** Every rate-limit header, whatever its dialect (`X-RateLimit-*`, `RateLimit`, `RateLimit-Policy`, `RateLimit-*`, `X-Rate-Limit-*`), and Retry-After. */
const RATE_LIMIT_HEADER = /^(?:x-)?rate-?limit(?:-|$)|^retry-after$/;
/** no server sends more of them: the rest of a header flood is left out */
const MAX_NOTED_HEADERS = 12;

/** The rate-limit headers, in the order the server sent them, and, for an error, the server's own words (bounded). */
function answerNote(headers: Dispatcher.ResponseData['headers'], attempt: Attempt, text: string): string {
  const parts: string[] = [];
  for (const [name, v] of Object.entries(headers)) {
    if (v === undefined || !RATE_LIMIT_HEADER.test(name)) continue;
    if (parts.length === MAX_NOTED_HEADERS) break;
    // header values may carry obs-text, which reads as C1 controls
    parts.push(`${name}: ${cleanText(Array.isArray(v) ? v.join(', ') : v, API_TEXT_CAPS.message)}`);
  }
  if (attempt.kind !== 'ok') {
    const body = cleanText(text.slice(0, API_TEXT_CAPS.message + 1), API_TEXT_CAPS.message + 1)
      .replace(/\s+/g, ' ')
      .trim();
    if (body) parts.push(`body: ${body.length > API_TEXT_CAPS.message ? `${body.slice(0, API_TEXT_CAPS.message)}…` : body}`);
  }
  return parts.length ? ` · ${parts.join(' · ')}` : '';
}

function errorCodeOf(body: unknown): string | undefined {
  const error = (body as { error?: { code?: unknown } } | undefined)?.error;
  // the server's token, printed on stderr and kept in the summary: cleaned and capped
  return typeof error?.code === 'string' ? cleanText(error.code, API_TEXT_CAPS.code) : undefined;
}
