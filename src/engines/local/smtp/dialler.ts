import pLimit from 'p-limit';
import { anySignal, pause, timeoutSignal, type Clock } from './clock.js';
import { converse, failureOf, nothing, type Attempt, type DialogueOptions, type SessionOutcome } from './dialogue.js';
import { isIpLiteralName, privateAddress } from './guard.js';
import { HostHealth } from './hosts.js';
import { Outbound } from './outbound.js';
import { showProxy } from './proxy.js';
import type { Reply } from './reply.js';
import { SessionError, SmtpSession } from './session.js';
import { MemorySessionBudget, type SessionBudget, type SessionLease } from './stores.js';
import type { SmtpFailure } from '../../../verdict.js';
import type { SmtpCheckOptions } from './check-options.js';

/** RFC 5321 §4.5.3.2.1 allows a server 5 minutes for its greeting; tarpits pause 10-30 s */
export const DEFAULT_BANNER_TIMEOUT_MS = 60_000;
export const DEFAULT_HOST_BUDGET_MS = 120_000;
/** MX hosts tried for one domain, best preference first */
const MAX_MX = 5;

/** The checker's options the dialler uses, declared once in check-options.ts. */
export interface DialOptions
  extends DialogueOptions,
    Pick<
      SmtpCheckOptions,
      | 'port' | 'timeoutMs' | 'bannerTimeoutMs' | 'hostBudgetMs' | 'hostBudgetWindowMs' | 'publicOnly' | 'blockRetestMs'
      | 'proxy' | 'concurrency' | 'perHost' | 'budget' | 'resolveHost' | 'onWarning' | 'onSession'
    > {
  clock: Clock;
  /** a connection opened (the run's `sessions`) */
  onOpened: () => void;
  /** why the last answer could not be had, in words (for `check` to say) */
  onProblem: (problem: string) => void;
}

/** A try that got no session on a host: try the next MX host. */
interface NoSession {
  next: true;
  why: SmtpFailure;
  note: string;
}

type Skip = NonNullable<ReturnType<HostHealth['skip']>>;

const SKIPPED: Record<Skip, string> = {
  refused: 'refused a connection earlier: not dialled again for now',
  timeout: 'did not answer earlier: not dialled again for now',
  protocol: 'broke the protocol earlier: not dialled again for now',
  spent: 'the time allowed for this mail server (--smtp-budget) is spent',
};

/** "Skip this host", as the row's reason and in words: the one place that says it. */
function skipped(host: string, skip: Skip): NoSession {
  return { next: true, why: skip === 'spent' || skip === 'timeout' ? 'timeout' : 'unreachable', note: `${host}: ${SKIPPED[skip]}` };
}

/**
 * Admission and connecting: which MX host is dialled, when, and whether at
 * all. The MX hosts in preference order (RFC 5321 §5.1), the next one whenever
 * a host gives no session; three waits before a dial (a busy host's pause, a
 * session slot to that host — shared with other instances through the
 * SessionBudget —, a place among the sessions open in all), each bounded by
 * the host's time budget; serve's SSRF guard; the judgement whether outbound
 * SMTP is blocked at all (outbound.ts). What a host did is kept in HostHealth.
 */
export class Dialler {
  readonly hosts: HostHealth;
  readonly outbound: Outbound;
  private readonly budget: SessionBudget;
  private readonly slots: ReturnType<typeof pLimit>;
  private saidBlocked = false;

  constructor(
    private readonly o: DialOptions,
    /** aborted when the run is over: nothing more is dialled or waited for */
    private readonly closing: AbortSignal,
  ) {
    this.budget = o.budget ?? new MemorySessionBudget(o.perHost);
    this.slots = pLimit(o.concurrency);
    this.outbound = new Outbound(() => o.clock.now(), o.blockRetestMs);
    this.hosts = new HostHealth({ budgetMs: o.hostBudgetMs ?? DEFAULT_HOST_BUDGET_MS, budgetWindowMs: o.hostBudgetWindowMs, now: () => o.clock.now() });
  }

  /** One try at `rcpts` over the domain's MX hosts. Rejects only when `signal` aborts. */
  async attempt(hosts: readonly string[], domain: string, rcpts: readonly string[], signal?: AbortSignal): Promise<Attempt> {
    let last: NoSession | undefined;
    for (const host of hosts.slice(0, MAX_MX)) {
      if (this.closing.aborted) break;
      const skip = this.hosts.skip(host);
      const result = skip ? skipped(host, skip) : await this.onHost(host, domain, rcpts, signal);
      if (!('next' in result)) return result;
      last = result;
    }
    if (last) this.o.onProblem(last.note);
    return nothing(last?.why ?? 'unreachable', last?.note);
  }

  /** The three waits, each within the host's budget: a waiting line at a tarpit ends too. */
  private async onHost(host: string, domain: string, rcpts: readonly string[], signal?: AbortSignal): Promise<Attempt | NoSession> {
    // a host that said "too many connections" gets a pause, then one session at a time
    const busyFor = this.hosts.pause(host);
    if (busyFor > 0) await pause(this.o.clock, Math.min(busyFor, this.hosts.remaining(host)), signal, this.closing);
    const [budgetOver, cancelTimer] = timeoutSignal(this.o.clock, Math.max(0, this.hosts.remaining(host)));
    const waitSignal = anySignal(signal, this.closing, budgetOver);
    let lease: SessionLease;
    try {
      lease = await this.budget.acquire(host, waitSignal);
      try {
        await this.hosts.enter(host, waitSignal);
      } catch (err) {
        lease.release();
        throw err;
      }
    } catch {
      signal?.throwIfAborted();
      if (this.closing.aborted) return nothing('timeout');
      return { next: true, why: 'timeout', note: `${host}: the time allowed for this mail server (--smtp-budget) ran out waiting for a session` };
    } finally {
      cancelTimer();
    }
    try {
      return await this.slots(() => this.dial(host, domain, rcpts, signal));
    } finally {
      this.hosts.leave(host);
      lease.release();
    }
  }

  private async dial(host: string, domain: string, rcpts: readonly string[], signal?: AbortSignal): Promise<Attempt | NoSession> {
    // waited in the run-wide queue past the caller's interest (serve's background limit)
    signal?.throwIfAborted();
    if (this.closing.aborted) return nothing('timeout');
    const skip = this.hosts.skip(host);
    if (skip) return skipped(host, skip);
    if (!this.outbound.mayDial()) return nothing('timeout', `outbound SMTP looks blocked (${this.outbound.blockedWhy}): not dialled`);
    const addresses = await this.addressesOf(host);
    if (typeof addresses === 'string') {
      this.outbound.settled();
      return { next: true, why: 'unreachable', note: `${host}: ${addresses}` };
    }
    const deadlineAt = this.hosts.begin(host);
    try {
      let session: SmtpSession;
      try {
        session = await SmtpSession.connect({
          host: addresses[0]!,
          port: this.o.port,
          timeoutMs: Math.min(this.o.timeoutMs, Math.max(1, deadlineAt - this.o.clock.now())),
          bannerTimeoutMs: this.o.bannerTimeoutMs ?? Math.max(DEFAULT_BANNER_TIMEOUT_MS, this.o.timeoutMs),
          deadlineAt,
          now: () => this.o.clock.now(),
          proxy: this.o.proxy,
          signal: anySignal(signal, this.closing),
        });
      } catch (err) {
        if (!(err instanceof SessionError)) throw err;
        return this.connectFailed(err, host, domain);
      }
      return await this.talk(session, host, rcpts, signal);
    } finally {
      this.hosts.end(host);
    }
  }

  /** The MX host's addresses that may be dialled, or why there are none. */
  private async addressesOf(host: string): Promise<string[] | string> {
    if (this.o.publicOnly && isIpLiteralName(host)) return 'an MX name that is an IP address is not dialled (--smtp-allow-private lifts this)';
    if (this.o.proxy?.remoteDns) return [host];
    const all = await this.o.resolveHost(host).catch(() => []);
    if (this.o.publicOnly) {
      const refused = all.map(privateAddress).find((r) => r !== undefined);
      const usable = all.filter((a) => privateAddress(a) === undefined);
      if (usable.length === 0 && refused) return `${refused}; not dialled (--smtp-allow-private lifts this)`;
      return usable.length > 0 ? usable : 'the MX host has no address';
    }
    return all.length > 0 ? all : 'the MX host has no address';
  }

  /** An open connection: the banner, the dialogue, QUIT; what the host showed goes to its health. */
  private async talk(session: SmtpSession, host: string, rcpts: readonly string[], signal?: AbortSignal): Promise<Attempt | NoSession> {
    // counted as the server counts them: every connection that opened
    this.o.onOpened();
    if (this.outbound.opened()) this.o.onWarning('outbound SMTP works again: mailbox checks resumed');
    const ended = this.o.onSession?.();
    let outcome: SessionOutcome = 'failed';
    try {
      let greeting: Reply;
      try {
        greeting = await session.greeting();
      } catch (err) {
        if (!(err instanceof SessionError)) throw err;
        // called off by us (serve's client hung up, the run ended): no fault of the host's
        if (err.kind === 'aborted') {
          signal?.throwIfAborted();
          return nothing('timeout');
        }
        // a banner that never came, or a hang-up before it: the next MX host may talk
        if (err.kind === 'timeout' || err.kind === 'dropped') this.hosts.down(host, err.kind === 'timeout' ? 'timeout' : 'refused');
        if (err.kind === 'protocol') this.hosts.down(host, 'protocol');
        return { next: true, why: failureOf(err.kind), note: `${host}: ${err.message}` };
      }
      const end = await converse(session, greeting, rcpts, host, this.o);
      signal?.throwIfAborted();
      if (end.problem) this.o.onProblem(end.problem);
      if (end.host === 'busy') this.hosts.busy(host);
      else if (end.host === 'fine') this.hosts.fine(host);
      else if (end.host === 'protocol') this.hosts.down(host, 'protocol');
      outcome = end.ended ?? 'failed';
      if (!(await session.quit()) && outcome !== 'failed') {
        // QUIT got the answer to something else: the replies had slipped, none is believed
        this.hosts.down(host, 'protocol');
        outcome = 'failed';
        return nothing('unreachable', `${host}: the server's replies did not match the commands; its answers are not used`);
      }
      return { outcomes: end.outcomes, later: end.later, why: end.why, ...(end.ended ? { ended: end.ended } : {}), ...(end.note ? { note: end.note } : {}) };
    } finally {
      session.destroy();
      ended?.(outcome);
    }
  }

  private connectFailed(err: SessionError, host: string, domain: string): NoSession {
    const proxy = this.o.proxy;
    if (err.kind === 'proxy-auth' || err.kind === 'proxy') {
      if (this.outbound.broken(`SMTP proxy ${showProxy(proxy!)}: ${err.message}`) && !this.saidBlocked) {
        this.saidBlocked = true;
        this.o.onWarning(`SMTP proxy ${showProxy(proxy!)}: ${err.message}; mailbox checks paused (smtp left empty), tried again later`);
      }
      return { next: true, why: 'unreachable', note: `SMTP proxy: ${err.message}` };
    }
    if (err.kind === 'refused' || err.kind === 'connect-timeout') {
      this.hosts.down(host, err.kind === 'refused' ? 'refused' : 'timeout');
      if (this.outbound.failed(host, domain, err.kind) && !this.saidBlocked) {
        this.saidBlocked = true;
        this.o.onWarning(
          `outbound SMTP looks blocked: ${this.outbound.blockedWhy} (port ${this.o.port}, last: ${host}); ` +
            `mailbox checks paused (smtp left empty) and tried again later. ` +
            (proxy ? `The proxy ${showProxy(proxy)} may not be allowed to reach port ${this.o.port}` : `Many networks block port 25: try --smtp-proxy socks5://host:port`),
        );
      }
    } else this.outbound.settled();
    return { next: true, why: failureOf(err.kind), note: `${host}: ${err.message}` };
  }
}
