import type { Validator } from '../validator.js';
import type { Verdict } from '../../verdict.js';

/** Options of the offline engine (PRODUCT.md §4). */
export interface LocalEngineOptions {
  /** resolver `host[:port]`; the system resolver when absent */
  dnsServer?: string;
  /** per DNS query, ms (default 2000) */
  dnsTimeoutMs?: number;
  /** false skips DNS entirely (mx unknown): for `serve --no-dns` and benchmarks */
  dns?: boolean;
  /** one-line warnings for the user (e.g. "DNS is unusable") */
  onWarning?: (message: string) => void;
}

// PLACEHOLDER (issue 5 replaces this file): syntax-free, DNS-free stand-in so the
// pipeline and serve can be built against the interface.
export function createLocalValidator(_options: LocalEngineOptions = {}): Validator & {
  validateOne(email: string, signal?: AbortSignal): Promise<Verdict>;
} {
  let requests = 0;
  const one = async (email: string): Promise<Verdict> => {
    const at = email.lastIndexOf('@');
    const ok = at > 0 && at < email.length - 1;
    return {
      email,
      isValid: ok,
      status: ok ? 'valid' : 'invalid',
      confidence: ok ? 0.5 : 1,
      provider: 'mailsift-local',
      details: { syntax: ok, domain: ok ? email.slice(at + 1).toLowerCase() : undefined },
    };
  };
  return {
    engine: 'local',
    validateOne: one,
    async validate(emails) {
      requests++;
      return Promise.all(emails.map(one));
    },
    stats: () => ({ requests, retries: 0, rateLimited: 0 }),
    async close() {},
  };
}
