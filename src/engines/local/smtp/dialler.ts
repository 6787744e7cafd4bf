import pLimit from 'p-limit';
import type { Clock } from '../../../time/clock.js';
import { anySignal, pause, timeoutSignal } from '../../../time/waits.js';
import { converse, failureOf, nothing, type Attempt, type DialogueEnd, type DialogueOptions, type SessionOutcome } from './dialogue.js';
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
export const MAX_MX = 5;
/**
 * Addresses tried per MX host, and per domain in all: a host may publish
 * many, and each dead one can cost a connect timeout (Postfix stops at 5,
 * smtp_mx_address_limit).
 */
const MAX_ADDRESSES_PER_HOST = 5;
const MAX_ADDRESSES = 10;
/**
 * Sessions one try may open to one server, one after another, when the
 * server keeps dropping them: each must have answered something, so this
 * only bounds a long list against a strict limit (the server's time budget
 * bounds it too).
 */
const MAX_SESSIONS = 100;

/** The checker's options the dialler uses, declared once in check-options.ts. */
export interface DialOptions
  extends DialogueOptions,
    Pick<
      SmtpCheckOptions,
      | 'port'
      | 'timeoutMs'
      | 'bannerTimeoutMs'
      | 'hostBudgetMs'
      | 'hostBudgetWindowMs'
      | 'publicOnly'
      | 'blockRetestMs'
      | 'proxy'
      | 'concurrency'
      | 'perHost'
      | 'budget'
      | 'resolveHost'
      | 'onWarning'
      | 'onSession'
    > {
  clock: Clock;
  /** a connection opened (the run's `sessions`) */
  onOpened: () => void;
  /** why the last answer could not be had, in words (for `check` to say) */
  onProblem: (problem: string) => void;
}

/** A try that got no session on a server: try the host's next address, or the next MX host. */
interface NoSession {
  next: true;
  why: SmtpFailure;
  note: string;
}

/**
 * One server to dial: an address of an MX host (or, through a socks5h proxy,
 * the host's name). Its health and its session budget are the address's.
 */
interface Server {
  address: string;
  /** as messages name it: the host, with the address when the host has several */
  name: string;
}

type Skip = NonNullable<ReturnType<HostHealth['skip']>>;

/**
 * A session that may outlive its answers: one whose reply we timed out is
 * still open on the server's side until the server closes it (session.ts,
 * release), and keeps its place among the server's sessions until then.
 */
interface Held {
  closed?: Promise<void>;
}

/** Runs `free` once `held` is let go of: at once, or when the server has closed it. */
function whenLetGo(held: Held, free: () => void): void {
  if (held.closed !== undefined) void held.closed.then(free);
  else free();
}

const SKIPPED: Record<Skip, string> = {
  refused: 'refused a connection earlier: not dialled again for now',
  timeout: 'did not answer earlier: not dialled again for now',
  protocol: 'broke the protocol earlier: not dialled again for now',
  spent: 'the time allowed for this mail server (--smtp-budget) is spent',
};

/** "Skip this server", as the row's reason and in words: the one place that says it. */
function skipped(server: Server, skip: Skip): NoSession {
  return { next: true, why: skip === 'spent' || skip === 'timeout' ? 'timeout' : 'unreachable', note: `${server.name}: ${SKIPPED[skip]}` };
}

/** Two sessions' answers as one try's: the second's reason holds for what neither answered. */
function joined(a: Attempt, b: Attempt): Attempt {
  const both: Attempt = { outcomes: new Map([...a.outcomes, ...b.outcomes]), later: [...a.later, ...b.later], why: b.why };
  if (b.ended) both.ended = b.ended;
  if (b.note) both.note = b.note;
  return both;
}

/**
 * Admission and connecting: which server is dialled, when, and whether at
 * all. The MX hosts in preference order and each host's addresses in turn
 * (RFC 5321 §5.1), the next whenever one gives no session; three waits before
 * a dial (a busy server's pause, a session slot to that server — shared with
 * other instances through the SessionBudget —, a place among the sessions
 * open in all), each bounded by the server's time budget; a new session for
 * the rest when a server drops one that had answered some recipients; serve's
 * SSRF guard; the judgement whether outbound SMTP is blocked at all
 * (outbound.ts). Politeness is per server address, not per name: what a
 * server did is kept in HostHealth under its address.
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
    this.outbound = new Outbound(o.clock, o.blockRetestMs);
    this.hosts = new HostHealth({ budgetMs: o.hostBudgetMs ?? DEFAULT_HOST_BUDGET_MS, budgetWindowMs: o.hostBudgetWindowMs, clock: o.clock });
  }

  /** One try at `rcpts` over the domain's MX hosts and their addresses. Rejects only when `signal` aborts. */
  async attempt(hosts: readonly string[], domain: string, rcpts: readonly string[], signal?: AbortSignal): Promise<Attempt> {
    let last: NoSession | undefined;
    /** addresses dialled in this try: two names of one server are one server */
    const tried = new Set<string>();
    for (const host of hosts.slice(0, MAX_MX)) {
      if (this.closing.aborted || tried.size >= MAX_ADDRESSES) break;
      const addresses = await this.addressesOf(host);
      if (typeof addresses === 'string') {
        last = { next: true, why: 'unreachable', note: `${host}: ${addresses}` };
        continue;
      }
      for (const address of addresses.slice(0, MAX_ADDRESSES_PER_HOST)) {
        if (this.closing.aborted || tried.size >= MAX_ADDRESSES) break;
        if (tried.has(address)) continue;
        tried.add(address);
        const server = { address, name: addresses.length > 1 ? `${host} [${address}]` : host };
        const result = await this.onServer(server, domain, rcpts, signal);
        if (!('next' in result)) return result;
        last = result;
      }
    }
    if (last) this.o.onProblem(last.note);
    return nothing(last?.why ?? 'unreachable', last?.note);
  }

  /**
   * Sessions to one server until its recipients are asked: one, and a new
   * one for the rest whenever a session ends early having answered some (the
   * server dropped it, or it stopped where the server would have). A server
   * that gives no first session sends the try on to the next address.
   */
  private async onServer(server: Server, domain: string, rcpts: readonly string[], signal?: AbortSignal): Promise<Attempt | NoSession> {
    let sum: Attempt | undefined;
    let ask = rcpts;
    for (let sessions = 1; ; sessions++) {
      const skip = this.hosts.skip(server.address);
      const result = skip ? skipped(server, skip) : await this.onHost(server, domain, ask, signal);
      if ('next' in result) {
        if (!sum) return result;
        this.o.onProblem(result.note);
        return joined(sum, nothing(result.why, result.note));
      }
      sum = sum ? joined(sum, result) : result;
      if (!result.rest?.length || this.closing.aborted) return sum;
      if (sessions >= MAX_SESSIONS) {
        const note = `${server.name}: ended ${MAX_SESSIONS} sessions early; the rest were not asked`;
        this.o.onProblem(note);
        return { ...sum, why: 'unreachable', note };
      }
      ask = result.rest;
    }
  }

  /** The three waits, each within the server's budget: a waiting line at a tarpit ends too. */
  private async onHost(server: Server, domain: string, rcpts: readonly string[], signal?: AbortSignal): Promise<DialogueEnd | NoSession> {
    const { address } = server;
    // a server that said "too many connections" gets a pause, then one session at a time
    const busyFor = this.hosts.pause(address);
    if (busyFor > 0) await pause(this.o.clock, Math.min(busyFor, this.hosts.remaining(address)), signal, this.closing);
    const [budgetOver, cancelTimer] = timeoutSignal(this.o.clock, Math.max(0, this.hosts.remaining(address)));
    const waitSignal = anySignal(signal, this.closing, budgetOver);
    let lease: SessionLease;
    try {
      lease = await this.budget.acquire(address, waitSignal);
      try {
        await this.hosts.enter(address, waitSignal);
      } catch (err) {
        lease.release();
        throw err;
      }
    } catch {
      signal?.throwIfAborted();
      if (this.closing.aborted) return nothing('timeout');
      return { next: true, why: 'timeout', note: `${server.name}: the time allowed for this mail server (--smtp-budget) ran out waiting for a session` };
    } finally {
      cancelTimer();
    }
    const held: Held = {};
    try {
      return await this.slots(() => this.dial(server, domain, rcpts, signal, held));
    } finally {
      whenLetGo(held, () => {
        this.hosts.leave(address);
        lease.release();
      });
    }
  }

  private async dial(server: Server, domain: string, rcpts: readonly string[], signal: AbortSignal | undefined, held: Held): Promise<DialogueEnd | NoSession> {
    // waited in the run-wide queue past the caller's interest (serve's background limit)
    signal?.throwIfAborted();
    if (this.closing.aborted) return nothing('timeout');
    const skip = this.hosts.skip(server.address);
    if (skip) return skipped(server, skip);
    if (!this.outbound.mayDial()) return nothing('timeout', `outbound SMTP looks blocked (${this.outbound.blockedWhy}): not dialled`);
    const deadlineAt = this.hosts.begin(server.address);
    try {
      let session: SmtpSession;
      try {
        session = await SmtpSession.connect({
          host: server.address,
          port: this.o.port,
          timeoutMs: Math.min(this.o.timeoutMs, Math.max(1, deadlineAt - this.o.clock.now())),
          bannerTimeoutMs: this.o.bannerTimeoutMs ?? Math.max(DEFAULT_BANNER_TIMEOUT_MS, this.o.timeoutMs),
          deadlineAt,
          clock: this.o.clock,
          proxy: this.o.proxy,
          signal: anySignal(signal, this.closing),
        });
      } catch (err) {
        if (!(err instanceof SessionError)) throw err;
        return this.connectFailed(err, server, domain);
      }
      return await this.talk(session, server, rcpts, signal, deadlineAt, held);
    } finally {
      // the server's time is spent until it has let the session go
      whenLetGo(held, () => this.hosts.end(server.address));
    }
  }

  /** The MX host's addresses that may be dialled (A, then AAAA), or why there are none. */
  private async addressesOf(host: string): Promise<string[] | string> {
    if (this.o.publicOnly && isIpLiteralName(host)) return 'an MX name that is an IP address is not dialled (--smtp-allow-private lifts this)';
    if (this.o.proxy?.remoteDns) return [host];
    const all = [...new Set(await this.o.resolveHost(host).catch(() => []))];
    if (this.o.publicOnly) {
      const refused = all.map(privateAddress).find((r) => r !== undefined);
      const usable = all.filter((a) => privateAddress(a) === undefined);
      if (usable.length === 0 && refused) return `${refused}; not dialled (--smtp-allow-private lifts this)`;
      return usable.length > 0 ? usable : 'the MX host has no address';
    }
    return all.length > 0 ? all : 'the MX host has no address';
  }

  /** An open connection: the banner, the dialogue, QUIT; what the server showed goes to its health. */
  private async talk(
    session: SmtpSession,
    server: Server,
    rcpts: readonly string[],
    signal: AbortSignal | undefined,
    deadlineAt: number,
    held: Held,
  ): Promise<DialogueEnd | NoSession> {
    const { address, name } = server;
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
        // called off by us (serve's client hung up, the run ended): no fault of the server's
        if (err.kind === 'aborted') {
          signal?.throwIfAborted();
          return nothing('timeout');
        }
        // a banner that never came, or a hang-up before it: the next address or MX host may talk
        if (err.kind === 'timeout' || err.kind === 'dropped') this.hosts.down(address, err.kind === 'timeout' ? 'timeout' : 'refused');
        if (err.kind === 'protocol') this.hosts.down(address, 'protocol');
        return { next: true, why: failureOf(err.kind), note: `${name}: ${err.message}` };
      }
      const end = await converse(session, greeting, rcpts, name, {
        ...this.o,
        ...this.hosts.habits(address),
        learn: (habits) => this.hosts.learn(address, habits),
      });
      signal?.throwIfAborted();
      if (end.problem) this.o.onProblem(end.problem);
      if (end.host === 'busy') this.hosts.busy(address);
      else if (end.host === 'fine') this.hosts.fine(address);
      else if (end.host === 'protocol') this.hosts.down(address, 'protocol');
      if (end.droppedAfter !== undefined) this.hosts.dropped(address, end.droppedAfter);
      if (end.slowedAfter !== undefined) this.hosts.slowed(address, end.slowedAfter);
      outcome = end.ended ?? 'failed';
      if (!(await session.quit()) && outcome !== 'failed') {
        // QUIT got the answer to something else: the replies had slipped, none is believed
        this.hosts.down(address, 'protocol');
        outcome = 'failed';
        return nothing('unreachable', `${name}: the server's replies did not match the commands; its answers are not used`);
      }
      return end;
    } finally {
      // a reply we timed out may still be in the works: waited for until the server closes, within its budget
      held.closed = session.release(deadlineAt - this.o.clock.now());
      ended?.(outcome);
    }
  }

  private connectFailed(err: SessionError, server: Server, domain: string): NoSession {
    const proxy = this.o.proxy;
    if (err.kind === 'proxy-auth' || err.kind === 'proxy') {
      if (this.outbound.broken(`SMTP proxy ${showProxy(proxy!)}: ${err.message}`) && !this.saidBlocked) {
        this.saidBlocked = true;
        this.o.onWarning(`SMTP proxy ${showProxy(proxy!)}: ${err.message}; mailbox checks paused (smtp left empty), tried again later`);
      }
      return { next: true, why: 'unreachable', note: `SMTP proxy: ${err.message}` };
    }
    if (err.kind === 'refused' || err.kind === 'connect-timeout') {
      // the address is down, not the host: its other addresses are still tried
      this.hosts.down(server.address, err.kind === 'refused' ? 'refused' : 'timeout');
      if (this.outbound.failed(server.address, domain, err.kind) && !this.saidBlocked) {
        this.saidBlocked = true;
        this.o.onWarning(
          `outbound SMTP looks blocked: ${this.outbound.blockedWhy} (port ${this.o.port}, last: ${server.name}); ` +
            `mailbox checks paused (smtp left empty) and tried again later. ` +
            (proxy
              ? `The proxy ${showProxy(proxy)} may not be allowed to reach port ${this.o.port}`
              : `Many networks block port 25: try --smtp-proxy socks5://host:port`),
        );
      }
    } else this.outbound.settled();
    return { next: true, why: failureOf(err.kind), note: `${server.name}: ${err.message}` };
  }
}
