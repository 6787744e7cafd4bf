import type { Validator, ValidatorStats } from '../validator.js';
import type { Verdict } from '../../verdict.js';
import { decide, type Checks, type DnsOutcome } from './decide.js';
import { DomainDns } from './dns.js';
import { createOfflineChecker } from './checks.js';
import { domainLists } from './lists.js';
import type { SharedCache } from './shared-cache.js';
import { DEFAULT_HOST_BUDGET_MS, SmtpChecker, type DomainJob, type SmtpCheckOptions, type SmtpFinding } from './smtp/checker.js';
import type { SmtpStats } from '../../summary.js';
import { checkInteger, checkMs } from '../../check-options.js';
import { abortable, withDeadline } from '../../delay.js';

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
  /** epoch ms, for the DNS cache's expiry; tests pass their own */
  now?: () => number;
  /** DNS answers shared with other processes (`serve --redis`) */
  dnsShared?: SharedCache;
  /** where each DNS lookup was answered from (serve's metrics) */
  onDnsCache?: (from: 'memory' | 'shared' | 'dns') => void;
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

export type LocalValidator = Validator & {
  validateOne(email: string, signal?: AbortSignal): Promise<Verdict>;
  stats(): LocalEngineStats;
  /** the mailbox check: 'blocked' while outbound SMTP is judged unusable (tried again later), 'off' without --smtp */
  smtpState(): 'ok' | 'blocked' | 'off';
};

export function createLocalValidator(options: LocalEngineOptions = {}): LocalValidator {
  checkLocalOptions(options);
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
  const smtp =
    options.smtp && dns
      ? new SmtpChecker({ ...options.smtp, resolveHost: (host) => dns.addressesOf(host), onWarning: warn })
      : undefined;
  if (options.smtp && !dns) warn('the mailbox check (--smtp) needs DNS to find mail servers: it is off');
  let requests = 0;

  const checked = options.onChecked;
  const validate = async (emails: readonly string[], signal?: AbortSignal): Promise<Verdict[]> => {
    signal?.throwIfAborted();
    const checks = emails.map(offline);
    if (dns) {
      // one lookup per distinct domain of the batch (and the cache spans batches)
      const pending = new Map<string, Promise<DnsOutcome>>();
      /** addresses per domain, for the progress told as each answer comes */
      const perDomain = new Map<string, number>();
      let nothingToAsk = 0;
      for (const c of checks) {
        const domain = dnsDomain(c);
        if (domain === undefined) nothingToAsk++;
        else perDomain.set(domain, (perDomain.get(domain) ?? 0) + 1);
        if (domain !== undefined && !pending.has(domain)) {
          const lookup = dns.lookup(domain);
          pending.set(domain, checked ? lookup.finally(() => checked((perDomain.get(domain) ?? 0) * (smtp ? 0.5 : 1))) : lookup);
        }
      }
      if (nothingToAsk > 0) checked?.(nothingToAsk);
      const outcomes = new Map<string, DnsOutcome>();
      await abortable(
        Promise.all([...pending].map(async ([d, p]) => outcomes.set(d, await p))),
        signal,
      );
      for (const c of checks) {
        const domain = dnsDomain(c);
        if (domain !== undefined) c.dns = outcomes.get(domain) ?? 'unanswered';
      }
      if (smtp) await abortable(askMailServers(emails, checks, signal), signal);
    }
    return checks.map((c, i) => decide(emails[i]!, c));
  };

  /**
   * The mailbox check, after DNS: the batch's addresses grouped per domain, one
   * job per domain with a usable (or implicit) MX. Syntax failures, NXDOMAIN,
   * null MX, unanswered DNS and disposable domains are never dialled.
   */
  const askMailServers = async (emails: readonly string[], checks: Checks[], signal?: AbortSignal): Promise<void> => {
    const byDomain = new Map<string, number[]>();
    checks.forEach((c, i) => {
      if (!c.syntax || c.literal || c.disposable || !c.domain) return;
      if (c.dns !== 'mx' && c.dns !== 'implicit-mx') return;
      // A non-ASCII local part needs SMTPUTF8 (RFC 6531), which many servers
      // lack and refuse with texts that read like "invalid address": not asked.
      if (!ASCII_LOCAL.test(emails[i]!.slice(0, emails[i]!.lastIndexOf('@')))) return;
      let list = byDomain.get(c.domain);
      if (!list) byDomain.set(c.domain, (list = []));
      list.push(i);
    });
    const deadline = options.smtp!.deadlineMs;
    const jobs: DomainJob[] = [];
    const asked = new Map<number, string>();
    // the other half of each address's progress (see onChecked): once, when its check is over
    const credited = new Set<number>();
    const credit = (indexes: Iterable<number>) => {
      let n = 0;
      for (const i of indexes) {
        if (dnsDomain(checks[i]!) === undefined || credited.has(i)) continue;
        credited.add(i);
        n++;
      }
      if (n > 0) options.onChecked?.(n * 0.5);
    };
    await Promise.all(
      [...byDomain].map(async ([domain, indexes]) => {
        const { hosts } = await dns!.answer(domain);
        if (hosts.length === 0) return;
        // the addresses as the server sees them: the domain in lower case
        for (const i of indexes) asked.set(i, `${emails[i]!.slice(0, emails[i]!.lastIndexOf('@'))}@${domain}`);
        jobs.push({ domain, hosts, emails: [...new Set(indexes.map((i) => asked.get(i)!))] });
      }),
    );
    if (jobs.length === 0) return credit(checks.keys());
    // Findings are applied as each group of domains is done; serve stops
    // waiting at its deadline and answers the rest from DNS and the lists,
    // while their check goes on and fills the cache for the next request.
    let open = true;
    const byEmail = new Map<string, number[]>();
    for (const [i, email] of asked) {
      const list = byEmail.get(email);
      if (list) list.push(i);
      else byEmail.set(email, [i]);
    }
    // addresses never dialled are done now
    credit([...checks.keys()].filter((i) => !asked.has(i)));
    // serve: a check that outlives its answer goes on to fill the cache, but for
    // one host budget at most — leftover work is bounded, whatever the tarpit
    const limit =
      deadline === undefined
        ? signal
        : AbortSignal.any([AbortSignal.timeout(Math.min(deadline + (options.smtp!.hostBudgetMs ?? DEFAULT_HOST_BUDGET_MS), 2 ** 31 - 1)), ...(signal ? [signal] : [])]);
    const work = smtp!.checkDomains(jobs, limit, (found) => {
      if (!open) return;
      for (const [email, f] of found) for (const i of byEmail.get(email) ?? []) apply(checks[i]!, f);
      credit([...found.keys()].flatMap((email) => byEmail.get(email) ?? []));
    });
    if (deadline === undefined) await work;
    else await withDeadline(work.catch(() => undefined), deadline);
    open = false;
    credit(checks.keys());
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

const ASCII_LOCAL = /^[\x21-\x7e ]+$/;

function apply(c: Checks, f: SmtpFinding | undefined): void {
  if (f?.mailbox) c.mailbox = f.mailbox;
  if (f?.catchAll !== undefined) c.catchAll = f.catchAll;
  if (f?.failure !== undefined) c.smtpFailure = f.failure;
  if (f?.note !== undefined) c.smtpNote = f.note;
}

/** The domain DNS is asked about: none for bad syntax or an address literal. */
function dnsDomain(c: Checks): string | undefined {
  return c.syntax && !c.literal && c.domain ? c.domain : undefined;
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
