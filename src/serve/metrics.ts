import { Counter, Gauge, Histogram, PROMETHEUS_CONTENT_TYPE, Registry } from './prometheus.js';
import type { Verdict } from '../verdict.js';
import { systemClock } from '../time/clock.js';

/**
 * `serve --metrics`: `GET /metrics` in the Prometheus text format
 * (`prometheus.ts`). A registry per instance, so a program that embeds
 * `startServer` twice, or has its own metrics, gets no clash. Labels take only
 * a few fixed values (route names, statuses): never an address, a key or a path
 * the client chose.
 */
export class ServeMetrics {
  readonly registry = new Registry();
  private readonly requests = this.registry.add(new Counter('mailsift_http_requests_total', 'HTTP requests answered, by route and status code'));
  private readonly duration = this.registry.add(
    new Histogram(
      'mailsift_http_request_duration_seconds',
      'Time from request to response, by route',
      [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    ),
  );
  private readonly addresses = this.registry.add(new Counter('mailsift_addresses_validated_total', 'Addresses validated, by verdict status'));
  private readonly rateLimited = this.registry.add(new Counter('mailsift_rate_limited_total', 'Requests refused with 429, by bucket kind (key or ip)'));
  private readonly cache = this.registry.add(
    new Counter('mailsift_cache_lookups_total', 'Cache lookups by cache and result: hit in this process (memory), hit in Redis (shared), or miss'),
  );
  private readonly dnsFailures = this.registry.add(
    new Counter('mailsift_dns_failures_total', 'DNS questions that got no answer (time-outs, SERVFAIL, refused), by c-ares code'),
  );
  private readonly smtpSessions = this.registry.add(new Counter('mailsift_smtp_sessions_total', 'SMTP sessions opened by the mailbox check, by outcome'));
  private readonly smtpOpen = this.registry.add(new Gauge('mailsift_smtp_sessions_open', 'SMTP sessions open now'));
  private readonly redisUp = this.registry.add(
    new Gauge('mailsift_redis_up', '1 while the shared Redis answers, 0 while this instance uses its own memory; absent without --redis'),
  );

  constructor() {
    addProcessMetrics(this.registry);
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

  /** a DNS question that got no answer, by its c-ares code (ETIMEOUT, ESERVFAIL, ECONNREFUSED…): a fixed set */
  dnsFailure(code: string): void {
    this.dnsFailures.inc({ code: /^E[A-Z]{1,20}$/.test(code) ? code : 'other' });
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
    this.smtpOpen.inc(1);
    let ended = false;
    return (outcome) => {
      if (ended) return;
      ended = true;
      this.smtpOpen.inc(-1);
      this.smtpSessions.inc({ outcome });
    };
  };

  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: PROMETHEUS_CONTENT_TYPE, body: this.registry.text() };
  }
}

/**
 * The process's own figures, named as prom-client's default metrics were
 * (with our prefix), so dashboards built on them keep working.
 */
function addProcessMetrics(registry: Registry): void {
  const startSeconds = Math.round(systemClock.now() / 1000 - process.uptime());
  const cpu = (part: 'user' | 'system' | 'both') => () => {
    const u = process.cpuUsage();
    return (part === 'user' ? u.user : part === 'system' ? u.system : u.user + u.system) / 1e6;
  };
  const counterOf = (name: string, help: string, read: () => number) => registry.add(new Counter(name, help, read));
  counterOf('mailsift_process_cpu_user_seconds_total', 'Total user CPU time spent in seconds.', cpu('user'));
  counterOf('mailsift_process_cpu_system_seconds_total', 'Total system CPU time spent in seconds.', cpu('system'));
  counterOf('mailsift_process_cpu_seconds_total', 'Total user and system CPU time spent in seconds.', cpu('both'));
  registry.add(new Gauge('mailsift_process_start_time_seconds', 'Start time of the process since unix epoch in seconds.', () => startSeconds));
  registry.add(new Gauge('mailsift_process_resident_memory_bytes', 'Resident memory size in bytes.', () => process.memoryUsage.rss()));
  registry.add(new Gauge('mailsift_nodejs_heap_size_total_bytes', 'Process heap size from Node.js in bytes.', () => process.memoryUsage().heapTotal));
  registry.add(new Gauge('mailsift_nodejs_heap_size_used_bytes', 'Process heap size used from Node.js in bytes.', () => process.memoryUsage().heapUsed));
  registry.add(new Gauge('mailsift_nodejs_external_memory_bytes', 'Node.js external memory size in bytes.', () => process.memoryUsage().external));
}
