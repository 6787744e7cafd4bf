import type { Validator, ValidatorStats } from '../validator.js';
import type { Verdict } from '../../verdict.js';
import { decide, type Checks, type DnsOutcome } from './decide.js';
import { DomainDns } from './dns.js';
import { createOfflineChecker } from './checks.js';
import { domainLists } from './lists.js';
import type { SharedCache } from './shared-cache.js';

export { parseDnsServer } from './dns.js';

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
  /** domains looked up at once at most (default 32) */
  dnsConcurrency?: number;
  /** epoch ms, for the DNS cache's expiry; tests pass their own */
  now?: () => number;
  /** DNS answers shared with other processes (`serve --redis`) */
  dnsShared?: SharedCache;
  /** where each DNS lookup was answered from (serve's metrics) */
  onDnsCache?: (from: 'memory' | 'shared' | 'dns') => void;
}

export interface LocalEngineStats extends ValidatorStats {
  /** DNS questions sent, the resolver probe included */
  dnsQueries: number;
}

export type LocalValidator = Validator & {
  validateOne(email: string, signal?: AbortSignal): Promise<Verdict>;
  stats(): LocalEngineStats;
};

export function createLocalValidator(options: LocalEngineOptions = {}): LocalValidator {
  const lists = domainLists();
  const warnings: string[] = [];
  const warn = (message: string) => {
    warnings.push(message);
    options.onWarning?.(message);
  };
  const dns =
    options.dns === false
      ? undefined
      : new DomainDns({
          server: options.dnsServer,
          timeoutMs: options.dnsTimeoutMs ?? 2000,
          concurrency: options.dnsConcurrency ?? 32,
          onWarning: warn,
          ...(options.now ? { now: options.now } : {}),
          shared: options.dnsShared,
          onCache: options.onDnsCache,
        });
  const offline = createOfflineChecker(lists);
  let requests = 0;

  const validate = async (emails: readonly string[], signal?: AbortSignal): Promise<Verdict[]> => {
    signal?.throwIfAborted();
    const checks = emails.map(offline);
    if (dns) {
      // one lookup per distinct domain of the batch (and the cache spans batches)
      const pending = new Map<string, Promise<DnsOutcome>>();
      for (const c of checks) {
        const domain = dnsDomain(c);
        if (domain !== undefined && !pending.has(domain)) pending.set(domain, dns.lookup(domain));
      }
      const outcomes = new Map<string, DnsOutcome>();
      await abortable(
        Promise.all([...pending].map(async ([d, p]) => outcomes.set(d, await p))),
        signal,
      );
      for (const c of checks) {
        const domain = dnsDomain(c);
        if (domain !== undefined) c.dns = outcomes.get(domain) ?? 'unanswered';
      }
    }
    return checks.map((c, i) => decide(emails[i]!, c));
  };

  return {
    engine: 'local',
    async validate(emails, signal) {
      requests++;
      return validate(emails, signal);
    },
    async validateOne(email, signal) {
      requests++;
      const [verdict] = await validate([email], signal);
      return verdict!;
    },
    stats: () => ({
      requests,
      retries: 0,
      rateLimited: 0,
      disposableListVersion: lists.disposableVersion,
      warnings: [...warnings],
      dnsQueries: dns?.queries ?? 0,
    }),
    async close() {
      dns?.close();
    },
  };
}

/** The domain DNS is asked about: none for bad syntax or an address literal. */
function dnsDomain(c: Checks): string | undefined {
  return c.syntax && !c.literal && c.domain ? c.domain : undefined;
}

function abortable<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

let sharedChecker: ((email: string) => Checks) | undefined;

/**
 * Syntax and lists only, synchronously, for callers that need no DNS (the
 * benchmark, tests): the verdict the engine gives with `dns: false`.
 */
export function checkOffline(email: string): Verdict {
  sharedChecker ??= createOfflineChecker();
  return decide(email, sharedChecker(email));
}
