import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import pLimit from 'p-limit';
import { UsageError } from '../../errors.js';
import type { DnsOutcome } from './decide.js';
import type { SharedCache } from './shared-cache.js';

/**
 * MX lookups for the offline engine: one lookup per domain while its answer is
 * fresh (in-flight lookups shared), a bounded number in flight, and a hard
 * per-query timeout. Answers are kept for ANSWER_TTL_MS — Node's resolver does
 * not say the records' own TTLs — and a domain DNS could not answer for only
 * UNANSWERED_TTL_MS, so that a long-lived `serve` follows DNS as it changes and
 * gets over an outage.
 *
 * Node's `{ timeout, tries }` is coarse: measured on Node 20 against a silent
 * server, timeout 500 ms/1 try gives up after ~980 ms, 500/2 after 2000 ms,
 * 200/3 after 1800 ms. So we ask c-ares for one try and enforce `timeoutMs`
 * with our own timer; the late answer, if any, is ignored.
 *
 * Broken DNS is not evidence: on a machine without internet the system
 * resolver answers NXDOMAIN for every name. Before a negative answer counts,
 * a probe (once per engine) asks for the root zone's NS records, which every
 * working resolver has; and for a name under `.invalid` (RFC 6761), which no
 * honest resolver resolves. A resolver that fails the first is unusable (every
 * DNS-dependent answer becomes `unanswered`); one that resolves the second
 * invents addresses, so an A-only answer from it proves nothing.
 */
export interface DnsOptions {
  /** `host[:port]`, host an IP address; the system resolver when absent */
  server?: string;
  timeoutMs: number;
  concurrency: number;
  onWarning: (message: string) => void;
  /** epoch ms; tests pass their own */
  now?: () => number;
  /** answers shared with other processes (serve --redis), asked before DNS */
  shared?: SharedCache;
  /** where each lookup was answered from (metrics) */
  onCache?: (from: 'memory' | 'shared' | 'dns') => void;
}

interface Probe {
  usable: boolean;
  invents: boolean;
}

const MAX_CACHED_DOMAINS = 200_000;
/** how long an answer (or a probe that found DNS working) is reused */
export const ANSWER_TTL_MS = 10 * 60_000;
/** how long "DNS did not answer" (or a probe that found DNS broken) stands before DNS is asked again */
export const UNANSWERED_TTL_MS = 30_000;

interface Cached<T> {
  value: Promise<T>;
  /** epoch ms; Infinity while the lookup runs */
  expires: number;
}

/** the outcomes other processes may reuse (a value from another version is a miss) */
const SHAREABLE: readonly DnsOutcome[] = ['mx', 'implicit-mx', 'null-mx', 'nxdomain', 'no-mail-host'];

type Answer<T> = { ok: T } | { code: string };

export class DomainDns {
  private readonly resolver: dns.Resolver;
  private readonly cache = new Map<string, Cached<DnsOutcome>>();
  private readonly limit: ReturnType<typeof pLimit>;
  private probe: Cached<Probe> | undefined;
  /** what the last probe found, so a warning is given when that changes, not at every probe */
  private lastProbe: Probe | undefined;
  private readonly now: () => number;
  private closed = false;
  /** DNS questions sent (the probe's included) */
  queries = 0;

  constructor(private readonly options: DnsOptions) {
    this.resolver = new dns.Resolver({ timeout: options.timeoutMs, tries: 1 });
    if (options.server !== undefined) this.resolver.setServers([parseDnsServer(options.server)]);
    this.limit = pLimit(options.concurrency);
    this.now = options.now ?? Date.now;
  }

  /** `domain` in ASCII, lower case. Never rejects. */
  lookup(domain: string): Promise<DnsOutcome> {
    const had = this.cache.get(domain);
    if (had && had.expires > this.now()) {
      this.options.onCache?.('memory');
      return had.value;
    }
    // re-inserted, so that the oldest entry is the first in the map
    if (had) this.cache.delete(domain);
    // bounded for long-lived engines (serve): forget the oldest domain first
    else if (this.cache.size >= MAX_CACHED_DOMAINS) this.cache.delete(this.cache.keys().next().value!);
    // an answer from the shared cache is kept here only as long as it has left there
    let sharedTtlMs: number | undefined;
    const entry = this.kept(
      () => this.sharedOrDns(domain, (ttl) => (sharedTtlMs = ttl)),
      (outcome) => sharedTtlMs ?? (outcome === 'unanswered' ? UNANSWERED_TTL_MS : ANSWER_TTL_MS),
    );
    this.cache.set(domain, entry);
    return entry.value;
  }

  /** Starts `run`, whose answer is then kept for `ttl(answer)` ms. */
  private kept<T>(run: () => Promise<T>, ttl: (answer: T) => number): Cached<T> {
    const entry: Cached<T> = { value: run(), expires: Infinity };
    void entry.value.then((answer) => {
      entry.expires = this.now() + ttl(answer);
    });
    return entry;
  }

  /**
   * The shared cache first, then DNS. "DNS did not answer" is this process's
   * trouble, not a fact about the domain: it is never shared.
   */
  private async sharedOrDns(domain: string, sharedTtl: (ms: number) => void): Promise<DnsOutcome> {
    const shared = this.options.shared;
    const hit = shared && (await shared.get(domain));
    const known = hit ? SHAREABLE.find((o) => JSON.stringify(o) === hit.value) : undefined;
    if (hit && known) {
      sharedTtl(hit.ttlMs);
      this.options.onCache?.('shared');
      return known;
    }
    this.options.onCache?.('dns');
    const outcome = await this.limit(() => this.lookupUncached(domain));
    if (shared && SHAREABLE.includes(outcome)) void shared.set(domain, JSON.stringify(outcome), ANSWER_TTL_MS);
    return outcome;
  }

  close(): void {
    this.closed = true;
    this.limit.clearQueue();
    this.resolver.cancel();
  }

  private async lookupUncached(domain: string): Promise<DnsOutcome> {
    if (this.closed) return 'unanswered';
    const probe = this.runProbe();
    const raw = await this.classify(domain);
    if (raw === 'mx' || raw === 'null-mx' || raw === 'unanswered') return raw;
    const { usable, invents } = await probe;
    if (!usable) return 'unanswered';
    if (raw === 'implicit-mx' && invents) return 'unanswered';
    return raw;
  }

  private async classify(domain: string): Promise<DnsOutcome> {
    const mx = await this.ask(() => this.resolver.resolveMx(domain));
    if ('ok' in mx) {
      if (mx.ok.length === 0) return this.implicit(domain);
      // RFC 7505: a lone MX of "." says the domain accepts no mail
      const nullOnly = mx.ok.every((r) => r.exchange === '' || r.exchange === '.');
      return nullOnly ? 'null-mx' : 'mx';
    }
    if (mx.code === dns.NOTFOUND) return 'nxdomain';
    if (mx.code === dns.NODATA) return this.implicit(domain);
    return 'unanswered';
  }

  /** RFC 5321 §5.1: no MX, but an A or AAAA record is the implicit MX. */
  private async implicit(domain: string): Promise<DnsOutcome> {
    const [a, aaaa] = await Promise.all([
      this.ask(() => this.resolver.resolve4(domain)),
      this.ask(() => this.resolver.resolve6(domain)),
    ]);
    const has = (r: Answer<string[]>) => 'ok' in r && r.ok.length > 0;
    if (has(a) || has(aaaa)) return 'implicit-mx';
    const negative = (r: Answer<string[]>) => 'ok' in r || r.code === dns.NODATA || r.code === dns.NOTFOUND;
    return negative(a) && negative(aaaa) ? 'no-mail-host' : 'unanswered';
  }

  private runProbe(): Promise<Probe> {
    if (this.probe && this.probe.expires > this.now()) return this.probe.value;
    this.probe = this.kept(() => this.probeNow(), (p) => (p.usable ? ANSWER_TTL_MS : UNANSWERED_TTL_MS));
    return this.probe.value;
  }

  private async probeNow(): Promise<Probe> {
    const nonce = Math.random().toString(36).slice(2, 10);
    const [root, bogus] = await Promise.all([
      this.ask(() => this.resolver.resolveNs('.')),
      this.ask(() => this.resolver.resolve4(`mailsift-probe-${nonce}.invalid`)),
    ]);
    const usable = 'ok' in root && root.ok.length > 0;
    const invents = 'ok' in bogus && bogus.ok.length > 0;
    const where = this.options.server ?? 'the system resolver';
    const before = this.lastProbe;
    this.lastProbe = { usable, invents };
    if (before && before.usable === usable && before.invents === invents) return { usable, invents };
    if (before && usable && !invents) {
      this.options.onWarning(`DNS at ${where} works again`);
    } else if (!usable) {
      const why = 'code' in root ? root.code : 'an empty answer';
      this.options.onWarning(
        `DNS is unusable (${where} gave ${why} for the root zone): MX checks skipped, DNS-dependent statuses are unknown`,
      );
    } else if (invents) {
      this.options.onWarning(`DNS at ${where} answers for names that do not exist: A-only domains are reported unknown`);
    }
    return { usable, invents };
  }

  private ask<T>(query: () => Promise<T>): Promise<Answer<T>> {
    this.queries++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve({ code: dns.TIMEOUT }), this.options.timeoutMs);
      query().then(
        (ok) => {
          clearTimeout(timer);
          resolve({ ok });
        },
        (err: NodeJS.ErrnoException) => {
          clearTimeout(timer);
          resolve({ code: err.code ?? 'EUNKNOWN' });
        },
      );
    });
  }
}

/** `host[:port]` → the form `setServers` takes; a UsageError for anything else. */
export function parseDnsServer(value: string): string {
  let host = value.trim();
  let port: string | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(host);
  if (bracketed) {
    host = bracketed[1]!;
    port = bracketed[2];
  } else if (host.split(':').length === 2) {
    [host, port] = host.split(':') as [string, string];
  }
  const family = isIP(host);
  const portNumber = port === undefined ? 53 : Number(port);
  if (family === 0 || !Number.isInteger(portNumber) || portNumber < 1 || portNumber > 65535) {
    throw new UsageError(`--dns-server wants an IP address with an optional port (host[:port]), not "${value}"`);
  }
  if (port === undefined) return host;
  return family === 6 ? `[${host}]:${portNumber}` : `${host}:${portNumber}`;
}
