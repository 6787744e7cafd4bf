import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Verdict } from '../verdict.js';

/**
 * `serve --metrics`: `GET /metrics` in the Prometheus text format. A registry of
 * our own (not prom-client's global one), so a program that embeds
 * `startServer` twice, or has its own metrics, gets no clash. Labels take only
 * a few fixed values (route names, statuses): never an address, a key or a path
 * the client chose.
 */
export class ServeMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'route' | 'status'>;
  private readonly duration: Histogram<'route'>;
  private readonly addresses: Counter<'status'>;
  private readonly rateLimited: Counter<'bucket'>;
  private readonly cache: Counter<'cache' | 'result'>;
  private readonly smtpSessions: Counter<'outcome'>;
  private readonly smtpOpen: Gauge;
  private readonly redisUp: Gauge;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'mailsift_' });
    this.requests = new Counter({
      name: 'mailsift_http_requests_total',
      help: 'HTTP requests answered, by route and status code',
      labelNames: ['route', 'status'],
      registers,
    });
    this.duration = new Histogram({
      name: 'mailsift_http_request_duration_seconds',
      help: 'Time from request to response, by route',
      labelNames: ['route'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.addresses = new Counter({
      name: 'mailsift_addresses_validated_total',
      help: 'Addresses validated, by verdict status',
      labelNames: ['status'],
      registers,
    });
    this.rateLimited = new Counter({
      name: 'mailsift_rate_limited_total',
      help: 'Requests refused with 429, by bucket kind (key or ip)',
      labelNames: ['bucket'],
      registers,
    });
    this.cache = new Counter({
      name: 'mailsift_cache_lookups_total',
      help: 'Cache lookups by cache and result: hit in this process (memory), hit in Redis (shared), or miss',
      labelNames: ['cache', 'result'],
      registers,
    });
    this.smtpSessions = new Counter({
      name: 'mailsift_smtp_sessions_total',
      help: 'SMTP sessions opened by the mailbox check, by outcome',
      labelNames: ['outcome'],
      registers,
    });
    this.smtpOpen = new Gauge({ name: 'mailsift_smtp_sessions_open', help: 'SMTP sessions open now', registers });
    this.redisUp = new Gauge({
      name: 'mailsift_redis_up',
      help: '1 while the shared Redis answers, 0 while this instance uses its own memory; absent without --redis',
      registers,
    });
  }

  request(route: string, status: number | undefined, seconds: number): void {
    const labels = { route, status: status === undefined ? 'none' : String(status) };
    this.requests.inc(labels);
    this.duration.observe({ route }, seconds);
  }

  /** a 429, against the window of an API key or (no valid key) of an IP address */
  refused(bucket: 'key' | 'ip'): void {
    this.rateLimited.inc({ bucket });
  }

  verdicts(verdicts: readonly Verdict[]): void {
    for (const v of verdicts) this.addresses.inc({ status: v.status });
  }

  /** a DNS lookup answered from this process's memory, the shared cache (Redis) or DNS itself */
  dnsLookup(from: 'memory' | 'shared' | 'dns'): void {
    this.cache.inc({ cache: 'dns', result: from === 'dns' ? 'miss' : from });
  }

  redis(state: 'connected' | 'unreachable'): void {
    this.redisUp.set(state === 'connected' ? 1 : 0);
  }

  /**
   * The hook for the SMTP mailbox check (being built alongside): call when a
   * session opens; call the returned function once when it ends, with how it
   * ended (e.g. 'ok', 'refused', 'timeout', 'error').
   */
  smtpSessionOpened = (): ((outcome: string) => void) => {
    this.smtpOpen.inc();
    let ended = false;
    return (outcome) => {
      if (ended) return;
      ended = true;
      this.smtpOpen.dec();
      this.smtpSessions.inc({ outcome });
    };
  };

  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
