import type { Validator, ValidatorStats } from '../validator.js';
import type { Verdict } from '../../verdict.js';
import { decide, type Checks, type DnsOutcome } from './decide.js';
import { DomainDns } from './dns.js';
import { createOfflineChecker, dnsDomain } from './checks.js';
import { BatchProgress } from './batch-progress.js';
import { askMailServers } from './mailbox-check.js';
import { domainLists } from './lists.js';
import type { SharedCache } from './shared-cache.js';
import { SmtpChecker, type SmtpCheckOptions } from './smtp/checker.js';
import type { SmtpFailure } from '../../verdict.js';
import type { SmtpStats } from '../../summary.js';
import { checkInteger, checkMs } from '../../check-options.js';
import { systemClock, type Clock } from '../../time/clock.js';
import { abortable } from '../../time/waits.js';

export { parseDnsServer } from './dns-server.js';

/**
 * The mailbox check's settings (--smtp); the CLI builds them from the
 * --smtp flags. The engine supplies the rest of the checker's options (its DNS
 * and its warnings).
 */
export type SmtpSettings = Omit<SmtpCheckOptions, 'resolveHost' | 'onWarning' | 'maxRecipients' | 'cacheTtlMs' | 'providers'> & {
  /** serve: answer without the check after this long; the check goes on and fills the cache */
  deadlineMs?: number;
};

/** Options of the offline engine (`--engine local` and `serve`). */
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
  /** what DNS and the mailbox check keep time on: their caches' expiry, time-outs and waits (a fake one in tests) */
  clock?: Clock;
  /** DNS answers shared with other processes (`serve --redis`) */
  dnsShared?: SharedCache;
  /** where each DNS lookup was answered from (serve's metrics) */
  onDnsCache?: (from: 'memory' | 'shared' | 'dns') => void;
  /** a DNS question that got no answer, by its c-ares code (serve's metrics) */
  onDnsFailure?: (code: string) => void;
  /** the mailbox check over SMTP; off when absent */
  smtp?: SmtpSettings;
  /**
   * Told, while a batch waits on DNS and SMTP, how many of its addresses' checks
   * have finished (in parts: with --smtp, DNS is half of an address's work), so
   * that a progress line moves before the batch's verdicts come. Each address
   * adds up to 1 exactly, by the time its batch resolves.
   */
  onChecked?: (addresses: number) => void;
}

export interface LocalEngineStats extends ValidatorStats {
  /** DNS questions sent, the resolver probe included */
  dnsQueries: number;
  smtp?: SmtpStats;
  /** why the mailbox check last could not tell (for `check` to say); not part of the run summary */
  smtpProblem?: string;
}

// an interface, not `Validator & {…}`: in an intersection, stats() would keep Validator's narrower return type
export interface LocalValidator extends Validator {
  validateOne(email: string, signal?: AbortSignal): Promise<Verdict>;
  stats(): LocalEngineStats;
  /** the mailbox check: 'blocked' while outbound SMTP is judged unusable (tried again later), 'off' without --smtp */
  smtpState(): 'ok' | 'blocked' | 'off';
  /**
   * DNS: 'unusable' while judged so by the answers the engine gets (and asked
   * again meanwhile, see DomainDns.retest), 'off' without DNS
   */
  dnsState(): 'ok' | 'unusable' | 'off';
}

export function createLocalValidator(options: LocalEngineOptions = {}): LocalValidator {
  checkLocalOptions(options);
  const clock = options.clock ?? systemClock;
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
          clock,
          shared: options.dnsShared,
          onCache: options.onDnsCache,
          onFailure: options.onDnsFailure,
        });
  const offline = createOfflineChecker(lists);
  const smtp = options.smtp && dns ? new SmtpChecker({ clock, ...options.smtp, resolveHost: (host) => dns.addressesOf(host), onWarning: warn }) : undefined;
  if (options.smtp && !dns) warn('the mailbox check (--smtp) needs DNS to find mail servers: it is off');
  let requests = 0;

  const validate = async (emails: readonly string[], signal?: AbortSignal): Promise<Verdict[]> => {
    signal?.throwIfAborted();
    const checks = emails.map(offline);
    if (dns) {
      const progress = new BatchProgress(checks, options.onChecked, smtp !== undefined);
      await abortable(
        clock,
        lookUpDomains(dns, checks, (domain) => progress.answered(domain)),
        signal,
      );
      // the run's own means failed: a resolver judged unusable leaves its rows unknown, and not final
      if (dns.usable() === false) for (const c of checks) if (c.dns === 'unanswered') c.outage = 'dns';
      if (smtp) {
        const { deadlineMs, hostBudgetMs } = options.smtp!;
        await abortable(
          clock,
          askMailServers(smtp, dns, emails, checks, { deadlineMs, hostBudgetMs, clock, onChecked: (i) => progress.checked(i) }, signal),
          signal,
        );
        // so does a mailbox check whose outbound port 25 is judged blocked (the rows it could not dial)
        if (smtp.state === 'blocked') for (const c of checks) if (c.mailbox === undefined && UNDIALLED.has(c.smtpFailure)) c.outage = 'smtp';
        progress.finish();
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
    smtpState: () => smtp?.state ?? 'off',
    dnsState: () => {
      if (!dns) return 'off';
      const usable = dns.usable();
      dns.retest();
      return usable === false ? 'unusable' : 'ok';
    },
    stats: () => ({
      requests,
      retries: 0,
      rateLimited: 0,
      disposableListVersion: lists.disposableVersion,
      warnings: [...warnings],
      dnsQueries: dns?.queries ?? 0,
      ...(smtp ? { smtp: { ...smtp.stats } } : {}),
      ...(smtp?.lastProblem ? { smtpProblem: smtp.lastProblem } : {}),
    }),
    async close() {
      smtp?.close();
      dns?.close();
    },
  };
}

/** failures of the kind a blocked port 25 gives: the rows it left undialled */
const UNDIALLED = new Set<SmtpFailure | undefined>(['timeout', 'unreachable']);

/** One lookup per distinct domain of the batch (the cache spans batches); each check gets its domain's outcome. */
async function lookUpDomains(dns: DomainDns, checks: Checks[], answered: (domain: string) => void): Promise<void> {
  const pending = new Map<string, Promise<DnsOutcome>>();
  for (const c of checks) {
    const domain = dnsDomain(c);
    if (domain !== undefined && !pending.has(domain))
      pending.set(
        domain,
        dns.lookup(domain).finally(() => answered(domain)),
      );
  }
  const outcomes = new Map(await Promise.all([...pending].map(async ([d, p]) => [d, await p] as const)));
  for (const c of checks) {
    const domain = dnsDomain(c);
    if (domain !== undefined) c.dns = outcomes.get(domain) ?? 'unanswered';
  }
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

/**
 * A library caller's numbers, checked at the call (the CLI's flags are checked
 * by their parsers): 0 sessions per host or a NaN timeout would hang a run.
 */
function checkLocalOptions(o: LocalEngineOptions): void {
  checkMs('dnsTimeoutMs', o.dnsTimeoutMs, 1);
  checkInteger('dnsConcurrency', o.dnsConcurrency, 1);
  if (!o.smtp) return;
  checkInteger('smtp.port', o.smtp.port, 1, 65_535);
  checkMs('smtp.timeoutMs', o.smtp.timeoutMs, 1);
  checkInteger('smtp.concurrency', o.smtp.concurrency, 1);
  checkInteger('smtp.perHost', o.smtp.perHost, 1);
  checkMs('smtp.retryDelayMs', o.smtp.retryDelayMs, 0);
}
