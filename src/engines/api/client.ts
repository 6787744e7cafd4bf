import { errorVerdict, type Verdict } from '../../verdict.js';
import type { Validator } from '../validator.js';
import { BatchLimit, Caller, type CallerOptions } from './caller.js';
import { MAX_IN_FLIGHT } from './concurrency-limit.js';
import { FailureTally } from '../failure.js';
import { ApiHttp, type HttpConfig } from './http.js';
import { matchResults, normalizeBulk, normalizeSingle } from './normalize.js';

export interface ApiConfig extends Omit<HttpConfig, 'concurrency'>, CallerOptions {}

/** The API's ceiling per bulk request: a bigger batch is refused. */
const MAX_BATCH = 1000;

/**
 * The API engine: bulk requests through one Caller (shared rate-limit governor,
 * retries), with the batch strategies a server that documents little needs — halve the batch size
 * when the server finds batches too large, split a batch spoilt by a bad address
 * to isolate it, and ask once more for addresses a response left out.
 */
export function createApiValidator(config: ApiConfig): Validator {
  const { http, caller } = connect(config);
  const limit = new BatchLimit(MAX_BATCH);
  const failures = new FailureTally();
  /** batches asked once more for the addresses their answer left out: counted as retries, with the caller's own */
  let reasks = 0;

  async function validateAll(emails: readonly string[], signal: AbortSignal, reasked: boolean): Promise<Verdict[]> {
    const size = limit.max;
    const chunks: string[][] = [];
    for (let i = 0; i < emails.length; i += size) chunks.push(emails.slice(i, i + size));
    const results = await Promise.all(chunks.map((chunk) => validateChunk(chunk, signal, reasked)));
    // Array.prototype.flat is slow in V8, and there is nearly always one chunk
    return results.length === 1 ? results[0]! : ([] as Verdict[]).concat(...results);
  }

  async function validateChunk(emails: string[], signal: AbortSignal, reasked: boolean): Promise<Verdict[]> {
    const r = await caller.call('/api/validate/bulk', { emails }, normalizeBulk, signal, { size: emails.length, limit });
    switch (r.kind) {
      case 'ok': {
        const { matched, missing } = matchResults(emails, r.value);
        noteUndetermined(matched);
        if (missing.length === 0) return matched;
        if (reasked) {
          failures.note({ kind: 'missing', text: 'the API left addresses out of its answers, twice' }, missing.length);
          return [...matched, ...missing.map((e) => errorVerdict(e, 'MISSING_RESULT', 'the server answered without this address'))];
        }
        // asked once more; never given a neighbour's verdict
        reasks++;
        return [...matched, ...(await validateAll(missing, signal, true))];
      }
      case 'too-large':
        if (emails.length === 1) {
          failures.note({ kind: 'http', text: 'the API refused a one-address batch as too large' }, 1);
          return [errorVerdict(emails[0]!, 'REQUEST_ERROR', 'the server refused a one-address batch as too large')];
        }
        // the caller has halved limit.max for the rest of the run: resend in smaller batches
        return validateAll(emails, signal, reasked);
      case 'bad-address': {
        if (emails.length === 1) return [invalidByServer(emails[0]!)];
        const half = Math.ceil(emails.length / 2);
        const parts = await Promise.all([validateChunk(emails.slice(0, half), signal, reasked), validateChunk(emails.slice(half), signal, reasked)]);
        return parts.flat();
      }
      case 'failed':
        failures.note(r.failure, emails.length);
        return emails.map((e) => errorVerdict(e, r.code, r.message));
    }
  }

  /** Results the server answered with an error object (see errorOf in normalize.ts): a cause of rows without a verdict. */
  function noteUndetermined(verdicts: readonly Verdict[]): void {
    const byCode = new Map<string, number>();
    for (const v of verdicts) if (v.error) byCode.set(v.error.code, (byCode.get(v.error.code) ?? 0) + 1);
    for (const [code, n] of byCode)
      failures.note({ kind: 'server', text: `the API answered ${code} for some addresses: it could not determine them for now` }, n);
  }

  return {
    engine: 'api',
    validate: (emails, signal) => validateAll(emails, signal, false),
    stats: () => ({
      ...caller.stats,
      retries: caller.stats.retries + reasks,
      rateLimitWaits: caller.rateLimitWaits,
      failures: failures.list(),
      concurrency: caller.inFlight,
    }),
    requestsAllowed: () => caller.inFlightLimit,
    close: () => http.close(),
  };
}

/** `mailsift check` with a key: one address through POST /api/validate. */
export async function validateOneViaApi(config: ApiConfig, email: string, signal: AbortSignal = new AbortController().signal): Promise<Verdict> {
  const { http, caller } = connect({ ...config, concurrency: 1 });
  try {
    const r = await caller.call('/api/validate', { email }, normalizeSingle, signal);
    switch (r.kind) {
      case 'ok':
        return { ...r.value, email };
      case 'bad-address':
        return invalidByServer(email);
      case 'too-large':
        return errorVerdict(email, 'REQUEST_ERROR', 'the server refused the request as too large');
      case 'failed':
        return errorVerdict(email, r.code, r.message);
    }
  } finally {
    await http.close();
  }
}

/** One keep-alive pool and one governor, reading the same clock. */
function connect(config: ApiConfig): { http: ApiHttp; caller: Caller } {
  // a connection for each request the limit may allow in flight; undici opens them only when needed
  const connections = config.concurrency === 'auto' ? MAX_IN_FLIGHT : config.concurrency;
  const http = new ApiHttp({ ...config, concurrency: connections }, config.clock);
  return { http, caller: new Caller(http, config) };
}

/** The server rejected the address itself (400 INVALID_EMAIL): its format failed. */
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
