export type ResetFormat = 'epoch-s' | 'epoch-ms' | 'delta-s' | 'http-date' | 'iso';
export type FaultStatus = 'valid' | 'invalid' | 'risky' | 'unknown';

export interface FaultVerdict {
  status: FaultStatus;
  confidence?: number;
  disposable?: boolean;
  role?: boolean;
  mx?: boolean;
}

/** What to do with one request instead of answering it normally. */
export type FaultAction =
  | 'reset' // destroy the socket without an answer
  | 'hang' // never answer (the client's timeout must fire)
  | 'truncate' // 200 with a body cut off mid-stream
  | 'malformed' // 200 with a complete body that is not JSON
  | { status: number; code?: string; retryAfter?: number | string };

export interface FaultServerOptions {
  /** default 'test-key'; a wrong/missing Bearer → authStatus with UNAUTHORIZED */
  apiKey?: string;
  /** 401 (default) or 403 for a refused key */
  authStatus?: 401 | 403;
  /** response shape; 'alternate' flips per 200 response; default 'a' */
  shape?: 'a' | 'b' | 'alternate';
  /** results in a random (seeded) order */
  shuffle?: boolean;
  lowercaseEcho?: boolean;
  /** leave this address out of a response; attempt counts the 200 responses that covered it, from 1 */
  omit?: (email: string, attempt: number) => boolean;
  /** default: local part starting with invalid/risky/unknown gives that status, else valid */
  verdictFor?: (email: string) => FaultVerdict;
  /** fixed windows aligned to whole seconds; 429 RATE_LIMITED with Retry-After past the limit */
  rateLimit?: {
    limit: number;
    windowMs: number;
    resetFormat: ResetFormat;
    /** X-RateLimit-Limit says these in turn, one per header set, while the window holds `limit` */
    advertisedLimits?: number[];
    /** X-RateLimit-Reset tells the reset this far off the true one (negative: in the past) */
    resetOffsetMs?: number;
  };
  /** sent on every answer, over the rate-limit headers it would send: a server whose headers lie */
  headers?: Record<string, string>;
  /** Shape A items' provider (default 'fault-server') */
  provider?: string;
  /** server clock = real clock + this (for Date-header skew tests) */
  clockOffsetMs?: number;
  failRate503?: number;
  /** rate of sockets destroyed without an answer */
  resetRate?: number;
  /** rate of bulk responses missing one result */
  dropResultRate?: number;
  /** rate of 200 responses whose body is cut off mid-stream */
  truncateRate?: number;
  /** deterministic faults: return an action for request number `index` (from 0), or undefined */
  fault?: (req: { path: string; emails: string[]; index: number }) => FaultAction | undefined;
  /** latency: every answer waits this long (after the rate-limit count, which is taken on arrival); a function is asked at each answer */
  delayMs?: number | (() => number);
  /** K requests served at once; `queue` (default K) more wait their turn; beyond, 503 with Retry-After: 1 */
  capacity?: number;
  queue?: number;
  /** more addresses than this → tooLargeStatus TOO_MANY_EMAILS */
  maxBatch?: number;
  tooLargeStatus?: 400 | 413;
  /** a request containing one → 400 INVALID_EMAIL */
  poison?: (email: string) => boolean;
  seed?: number;
  port?: number;
}

export interface RecordedRequest {
  path: string;
  emails: string[];
  /** 0 when the socket was destroyed or the request never answered */
  status: number;
  authorization: string | undefined;
  /** when the whole request had arrived (epoch ms) */
  at: number;
  /** when its headers arrived: the request had started (epoch ms) */
  startedAt: number;
}

export interface FaultServerStats {
  requests: number;
  count429: number;
  byStatus: Record<string, number>;
  /** the most requests in the server at once */
  peakInFlight: number;
  /** requests in the server over time: [ms since the first request, count] at each change */
  trace: [number, number][];
}

export interface FaultServer {
  url: string;
  requests: RecordedRequest[];
  count429(): number;
  stats(): FaultServerStats;
  close(): Promise<void>;
}

/** X-RateLimit-Reset as a server speaking `format` writes it. */
export function formatReset(format: ResetFormat, resetAt: number, now: number): string;
export function defaultVerdict(email: string): FaultVerdict;
export function startFaultServer(options?: FaultServerOptions): Promise<FaultServer>;

/** mulberry32: a seeded PRNG in [0, 1) */
export function seeded(seed: number): () => number;
