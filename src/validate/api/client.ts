import type { Dispatcher } from 'undici';
import { apiDispatcher } from './proxy.js';
import { AuthError } from '../../errors.js';
import { errorVerdict, type ErrorCode, type Verdict } from '../../verdict.js';
import type { Validator, ValidatorStats } from '../validator.js';
import { matchResults, normalizeBulk, normalizeSingle } from './normalize.js';

export interface ApiConfig {
  /** scheme and host, e.g. https://api.example.com */
  baseUrl: string;
  /** never logged, never part of an error */
  apiKey: string;
  timeoutMs: number;
  retries: number;
  concurrency: number;
  /** a proxy agent, for instance; a keep-alive pool to the base URL otherwise */
  dispatcher?: Dispatcher;
}

/** The outcome of one HTTP exchange, classified the way PRODUCT.md §1 reads status codes. */
type Attempt =
  | { kind: 'ok'; body: unknown }
  | { kind: 'auth'; status: number }
  | { kind: 'rate-limited'; retryAfterMs: number | undefined }
  | { kind: 'too-large' }
  | { kind: 'bad-address' }
  | { kind: 'request-error'; status: number; code: string | undefined }
  | { kind: 'retryable'; code: ErrorCode; detail: string; retryAfterMs: number | undefined };

const BACKOFF_BASE_MS = 250;
const BACKOFF_CAP_MS = 20_000;
const RATE_LIMIT_WAIT_MAX_MS = 10 * 60_000;

export function createApiValidator(config: ApiConfig): Validator {
  const http = new ApiHttp(config);
  const stats: ValidatorStats = { requests: 0, retries: 0, rateLimited: 0 };
  let refused: AuthError | undefined;

  /** Sends one batch until it gets an answer or runs out of retries. */
  async function send(emails: readonly string[], signal: AbortSignal): Promise<Verdict[]> {
    let failures = 0;
    let waitedMs = 0;
    for (;;) {
      if (refused) throw refused;
      stats.requests++;
      const attempt = await http.post('/api/validate/bulk', { emails }, signal);
      switch (attempt.kind) {
        case 'ok': {
          const verdicts = normalizeBulk(attempt.body);
          if (verdicts) return verdicts;
          if (++failures > config.retries) return emails.map((e) => errorVerdict(e, 'SERVER_ERROR', 'unreadable response'));
          stats.retries++;
          await sleep(backoff(failures), signal);
          continue;
        }
        case 'auth':
          refused ??= new AuthError(
            `the API refused the key (HTTP ${attempt.status}); check MAILSIFT_API_KEY or --api-key-file`,
          );
          throw refused;
        case 'rate-limited': {
          stats.rateLimited++;
          const wait = attempt.retryAfterMs ?? backoff(1);
          if (waitedMs + wait > RATE_LIMIT_WAIT_MAX_MS) {
            return emails.map((e) => errorVerdict(e, 'RATE_LIMITED', 'rate limited for too long'));
          }
          waitedMs += wait;
          await sleep(wait, signal);
          continue;
        }
        case 'too-large':
        case 'bad-address':
          if (emails.length === 1) {
            return attempt.kind === 'bad-address'
              ? [invalidByServer(emails[0]!)]
              : [errorVerdict(emails[0]!, 'REQUEST_ERROR', 'the server refused a one-address batch as too large')];
          }
          return splitAndSend(emails, signal);
        case 'request-error':
          return emails.map((e) =>
            errorVerdict(e, 'REQUEST_ERROR', `HTTP ${attempt.status}${attempt.code ? ` ${attempt.code}` : ''}`),
          );
        case 'retryable':
          if (++failures > config.retries) return emails.map((e) => errorVerdict(e, attempt.code, attempt.detail));
          stats.retries++;
          await sleep(attempt.retryAfterMs ?? backoff(failures), signal);
      }
    }
  }

  async function splitAndSend(emails: readonly string[], signal: AbortSignal): Promise<Verdict[]> {
    const half = Math.ceil(emails.length / 2);
    const [a, b] = await Promise.all([send(emails.slice(0, half), signal), send(emails.slice(half), signal)]);
    return [...a, ...b];
  }

  return {
    engine: 'api',
    async validate(emails, signal) {
      const first = matchResults(emails, await send(emails, signal));
      if (first.missing.length === 0) return first.matched;
      // Asked once more, alone; then reported, never given a neighbour's verdict.
      stats.retries++;
      const second = matchResults(first.missing, await send(first.missing, signal));
      return [
        ...first.matched,
        ...second.matched,
        ...second.missing.map((e) => errorVerdict(e, 'MISSING_RESULT', 'the server answered without this address')),
      ];
    },
    stats: () => ({ ...stats }),
    close: () => http.close(),
  };
}

/** `mailsift check` with a key: one address through POST /api/validate. */
export async function validateOneViaApi(config: ApiConfig, email: string, signal = new AbortController().signal): Promise<Verdict> {
  const http = new ApiHttp(config);
  try {
    for (let failures = 0; ; ) {
      const attempt = await http.post('/api/validate', { email }, signal);
      if (attempt.kind === 'ok') {
        const v = normalizeSingle(attempt.body);
        return v ? { ...v, email } : errorVerdict(email, 'SERVER_ERROR', 'unreadable response');
      }
      if (attempt.kind === 'auth') throw new AuthError(`the API refused the key (HTTP ${attempt.status})`);
      if (attempt.kind === 'bad-address') return invalidByServer(email);
      if (attempt.kind === 'request-error') return errorVerdict(email, 'REQUEST_ERROR', `HTTP ${attempt.status}`);
      if (attempt.kind === 'too-large') return errorVerdict(email, 'REQUEST_ERROR', 'HTTP 413');
      if (++failures > config.retries) {
        return attempt.kind === 'rate-limited'
          ? errorVerdict(email, 'RATE_LIMITED', 'rate limited')
          : errorVerdict(email, attempt.code, attempt.detail);
      }
      await sleep(attempt.retryAfterMs ?? backoff(failures), signal);
    }
  } finally {
    await http.close();
  }
}

function invalidByServer(email: string): Verdict {
  return {
    email,
    isValid: false,
    status: 'invalid',
    confidence: undefined,
    provider: '',
    details: { syntax: false },
  };
}

/** The HTTP layer: one keep-alive pool, JSON in and out, outcomes classified. */
class ApiHttp {
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly prefix: string;
  private readonly origin: string;

  constructor(private readonly config: ApiConfig) {
    const url = new URL(config.baseUrl);
    this.origin = url.origin;
    this.prefix = url.pathname.replace(/\/+$/, '');
    this.ownsDispatcher = !config.dispatcher;
    this.dispatcher = config.dispatcher ?? apiDispatcher(this.origin, config.concurrency);
  }

  async post(path: string, payload: unknown, signal: AbortSignal): Promise<Attempt> {
    let res: Dispatcher.ResponseData;
    try {
      res = await this.dispatcher.request({
        origin: this.origin,
        path: this.prefix + path,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          authorization: `Bearer ${this.config.apiKey}`,
        },
        body: JSON.stringify(payload),
        headersTimeout: this.config.timeoutMs,
        bodyTimeout: this.config.timeoutMs,
        signal,
      });
    } catch (err) {
      if (signal.aborted) throw err;
      return networkFailure(err);
    }
    let text: string;
    try {
      text = await res.body.text();
    } catch (err) {
      if (signal.aborted) throw err;
      return networkFailure(err);
    }
    const status = res.statusCode;
    const retryAfterMs = parseRetryAfter(res.headers['retry-after']);
    const body = parseJson(text);
    const code = errorCodeOf(body);
    if (status >= 200 && status < 300) {
      return body === undefined
        ? { kind: 'retryable', code: 'SERVER_ERROR', detail: 'malformed JSON in the response', retryAfterMs: undefined }
        : { kind: 'ok', body };
    }
    if (status === 401 || status === 403) return { kind: 'auth', status };
    if (status === 429) return { kind: 'rate-limited', retryAfterMs };
    if (status === 413 || code === 'TOO_MANY_EMAILS') return { kind: 'too-large' };
    if (status === 400 && code === 'INVALID_EMAIL') return { kind: 'bad-address' };
    if (status === 408 || status === 425 || status >= 500) {
      return { kind: 'retryable', code: 'SERVER_ERROR', detail: `HTTP ${status}`, retryAfterMs };
    }
    return { kind: 'request-error', status, code };
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }
}

function networkFailure(err: unknown): Attempt {
  const code = (err as { code?: string }).code ?? '';
  const timeout = code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT';
  return {
    kind: 'retryable',
    code: timeout ? 'TIMEOUT' : 'NETWORK',
    detail: timeout ? 'request timed out' : `network error${code ? ` (${code})` : ''}`,
    retryAfterMs: undefined,
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function errorCodeOf(body: unknown): string | undefined {
  const error = (body as { error?: { code?: unknown } } | undefined)?.error;
  return typeof error?.code === 'string' ? error.code : undefined;
}

function parseRetryAfter(value: string | string[] | undefined): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** Exponential backoff with full jitter. */
function backoff(failures: number): number {
  return Math.random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** failures);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
