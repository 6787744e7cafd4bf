import { randomBytes } from 'node:crypto';
import { abortable, delay } from '../../../delay.js';
import pLimit from 'p-limit';
import { classifyRcpt, classifyStep, isBusy, type RcptOutcome, type StepOutcome } from './classify.js';
import { providerRule, PROVIDER_RULES, type ProviderRule } from './providers.js';
import { showProxy, type SocksProxy } from './proxy.js';
import { showReply, type Reply } from './reply.js';
import { SessionError, SmtpSession, type FailureKind } from './session.js';
import { isIpLiteralName, privateAddress } from './guard.js';
import { HostHealth } from './hosts.js';
import { Outbound } from './outbound.js';
import type { SmtpStats } from '../../../summary.js';
import type { SmtpFailure } from '../../../verdict.js';
import { MemorySessionBudget, MemorySmtpCache, type MailboxFinding, type SessionBudget, type SessionLease, type SmtpCache } from './stores.js';

export interface SmtpCheckOptions {
  /** the name given in EHLO/HELO */
  helo: string;
  /** the MAIL FROM reverse path; '' is the null path `<>` */
  from: string;
  port: number;
  /** per reply and per TCP/proxy handshake */
  timeoutMs: number;
  /**
   * how long the greeting may take (default: DEFAULT_BANNER_TIMEOUT_MS, or
   * timeoutMs when larger); always bounded by the host's budget
   */
  bannerTimeoutMs?: number;
  /** the most time spent on one MX host (default DEFAULT_HOST_BUDGET_MS) */
  hostBudgetMs?: number;
  /** the host budget is renewed after this long (serve); absent: once per run */
  hostBudgetWindowMs?: number;
  /**
   * serve's SSRF guard: never dial an MX whose address is not on the public
   * internet, nor an IP-literal MX name (see guard.ts)
   */
  publicOnly?: boolean;
  /**
   * addresses whose check may be pending at once (serve); past it, an address
   * is answered without the check (`note` says why)
   */
  maxPending?: number;
  /** once outbound SMTP is judged blocked, wait this long before trying again (default 60 s, doubling) */
  blockRetestMs?: number;
  proxy?: SocksProxy;
  /** sessions open at once in all */
  concurrency: number;
  /** sessions open at once to one MX host (used when no `budget` is given) */
  perHost: number;
  /** wait before asking a greylisting (4xx) server again, once */
  retryDelayMs: number;
  /** MX host name → its addresses; the engine resolves through its own DNS */
  resolveHost: (host: string) => Promise<string[]>;
  onWarning: (message: string) => void;
  cache?: SmtpCache;
  budget?: SessionBudget;
  /** RCPT per transaction at most (RFC 5321 §4.5.3.1.8 says servers take 100) */
  maxRecipients?: number;
  /** how long catch-all results and mailbox findings are reused */
  cacheTtlMs?: number;
  providers?: readonly ProviderRule[];
  /**
   * Told when a session opens (serve's metrics); the function it returns is
   * called once when that session ends, with how: 'completed' (every recipient
   * asked), 'deferred' (a 4xx or 421 ended it), 'blocked' (a refusal of the
   * checker), 'refused' (another 5xx to EHLO, MAIL FROM or RSET), 'failed'
   * (a timeout or a dropped connection).
   */
  onSession?: () => (outcome: SessionOutcome) => void;
}

export type SessionOutcome = 'completed' | 'deferred' | 'blocked' | 'refused' | 'failed';

/** Why the check could not tell (the row's reason): see Details.smtpFailure. */
export type { SmtpFailure };

/** What the check found for one address; mailbox and catchAll absent when it could not tell. */
export interface SmtpFinding {
  mailbox?: MailboxFinding;
  catchAll?: boolean;
  /** set when mailbox is absent because the check failed */
  failure?: SmtpFailure;
  /** not asked: the domain's mail service accepts every address at RCPT time (providers.ts) */
  acceptsAll?: true;
  /** in words, when the check was not made or could not tell (serve's rawResponse) */
  note?: string;
}

/** A domain's addresses and its mail hosts, best preference first. */
export interface DomainJob {
  domain: string;
  hosts: readonly string[];
  emails: readonly string[];
}

const DEFAULT_TTL_MS = 30 * 60_000;
/** RFC 5321 §4.5.3.2.1 allows a server 5 minutes for its greeting; tarpits pause 10-30 s */
export const DEFAULT_BANNER_TIMEOUT_MS = 60_000;
export const DEFAULT_HOST_BUDGET_MS = 120_000;
/** MX hosts tried for one domain, best preference first */
const MAX_MX = 5;

/** one domain's progress through the check */
interface DomainState {
  job: DomainJob;
  catchAll: boolean | undefined;
  /** addresses still to ask */
  ask: string[];
  /** the random address of the catch-all probe, when the domain's answer is not cached nor being found */
  probe: string | undefined;
  /** the probe still wants an answer */
  probeOpen: boolean;
}

/** how one try at a list of recipients ended */
interface Attempt {
  outcomes: Map<string, RcptOutcome>;
  /** answered 4xx (greylisting, 421, too many connections): ask again once, later */
  later: string[];
  /** why the rest (neither answered nor deferred) could not be told */
  why: SmtpFailure;
  /** how the session ended (metrics); absent when none opened */
  ended?: SessionOutcome;
  /** what went wrong, in words */
  note?: string;
}

/** A try that got no session on a host: try the next MX host. */
interface NoSession {
  next: true;
  why: SmtpFailure;
  note: string;
}

const SKIPPED = {
  refused: 'refused a connection earlier: not dialled again for now',
  timeout: 'did not answer earlier: not dialled again for now',
  protocol: "broke the protocol earlier: not dialled again for now",
};

const nothing = (why: SmtpFailure, note?: string): Attempt => ({ outcomes: new Map(), later: [], why, ...(note ? { note } : {}) });

/**
 * The mailbox check: for each domain, sessions to its MX hosts that carry
 * many recipients (one MAIL FROM, up to 100 RCPT TO per transaction, RSET
 * between), a catch-all probe once per domain, the next MX host when one will
 * not talk, one more try after a delay for greylisting — and never DATA.
 * Sessions are bounded per MX host (the SessionBudget) and in all
 * (`concurrency`); time is bounded per MX host (`hostBudgetMs`). Identical
 * checks asked at once (serve) share one probe.
 */
export class SmtpChecker {
  readonly stats: SmtpStats = { asked: 0, accepted: 0, refused: 0, catchAll: 0, undetermined: 0, sessions: 0 };
  private readonly cache: SmtpCache;
  private readonly budget: SessionBudget;
  private readonly slots: ReturnType<typeof pLimit>;
  private readonly closing = new AbortController();
  private readonly ttl: number;
  private readonly hosts: HostHealth;
  private readonly outbound: Outbound;
  private saidBlocked = false;
  /** checks in progress, by address and by catch-all domain: a second asker waits for the first */
  private readonly inflight = new Map<string, Promise<SmtpFinding | undefined>>();
  private readonly probing = new Map<string, Promise<boolean | undefined>>();
  /** why the last answer could not be had, for `check` to say (e.g. "mx.example.com: 554 5.7.1 ...") */
  lastProblem: string | undefined;

  constructor(private readonly o: SmtpCheckOptions) {
    this.cache = o.cache ?? new MemorySmtpCache();
    this.budget = o.budget ?? new MemorySessionBudget(o.perHost);
    this.slots = pLimit(o.concurrency);
    this.ttl = o.cacheTtlMs ?? DEFAULT_TTL_MS;
    this.outbound = new Outbound(Date.now, o.blockRetestMs);
    this.hosts = new HostHealth({ budgetMs: o.hostBudgetMs ?? DEFAULT_HOST_BUDGET_MS, budgetWindowMs: o.hostBudgetWindowMs });
  }

  /** 'blocked' while outbound SMTP is judged unusable (it is tried again later); serve's /readyz shows it */
  get state(): 'ok' | 'blocked' {
    return this.outbound.blockedWhy === undefined ? 'ok' : 'blocked';
  }

  /** addresses whose check is under way now */
  get pending(): number {
    return this.inflight.size;
  }

  /** Findings for a domain's addresses (lower-case domain). Never rejects, unless `signal` aborts. */
  checkDomain(job: DomainJob, signal?: AbortSignal): Promise<Map<string, SmtpFinding>> {
    return this.checkDomains([job], signal);
  }

  /**
   * Findings for the addresses of several domains, by address. Domains with
   * the same MX hosts (a hosting provider's customers) share their sessions:
   * their recipients go to the host together. An address already being
   * checked (another request, in serve) is not asked again: its finding is
   * waited for.
   */
  async checkDomains(
    jobs: readonly DomainJob[],
    signal?: AbortSignal,
    /** called as each group of domains is done, before all are */
    onGroup?: (found: ReadonlyMap<string, SmtpFinding>) => void,
  ): Promise<Map<string, SmtpFinding>> {
    const found = new Map<string, SmtpFinding>();
    const joined: [string, Promise<SmtpFinding | undefined>][] = [];
    const mine: DomainJob[] = [];
    const settle = new Map<string, (f: SmtpFinding | undefined) => void>();
    for (const job of jobs) {
      const emails: string[] = [];
      for (const e of job.emails) {
        const running = this.inflight.get(e);
        if (running) joined.push([e, running]);
        else if (this.o.maxPending !== undefined && this.inflight.size >= this.o.maxPending) {
          this.stats.asked++;
          this.stats.undetermined++;
          found.set(e, { note: `the mailbox check has ${this.o.maxPending} addresses pending, its most: answered from DNS and the lists` });
        } else {
          emails.push(e);
          this.inflight.set(e, new Promise((resolve) => settle.set(e, resolve)));
        }
      }
      if (emails.length > 0) mine.push({ ...job, emails });
    }
    const groups = new Map<string, DomainJob[]>();
    for (const job of mine) {
      const key = job.hosts.join(' ');
      let g = groups.get(key);
      if (!g) groups.set(key, (g = []));
      g.push(job);
    }
    const release = (emails: Iterable<string>, from: ReadonlyMap<string, SmtpFinding>) => {
      for (const e of emails) {
        const done = settle.get(e);
        if (!done) continue;
        settle.delete(e);
        this.inflight.delete(e);
        done(from.get(e));
      }
    };
    try {
      await Promise.all([
        ...[...groups.values()].map(async (group) => {
          const theirs = await this.checkGroup(group, signal);
          release(group.flatMap((j) => j.emails), theirs);
          onGroup?.(theirs);
          for (const [email, f] of theirs) found.set(email, f);
        }),
        ...joined.map(async ([e, running]) => {
          const f = await abortable(running, signal);
          if (!f) return;
          found.set(e, f);
          onGroup?.(new Map([[e, f]]));
        }),
      ]);
    } finally {
      // an aborted or failed check leaves nobody waiting for it
      release([...settle.keys()], new Map());
    }
    return found;
  }

  private async checkGroup(jobs: readonly DomainJob[], signal?: AbortSignal): Promise<Map<string, SmtpFinding>> {
    const found = new Map<string, SmtpFinding>();
    /** read from the cache: not written back, so a finding is asked again once its TTL is over */
    const known = new Set<string>();
    const states: DomainState[] = [];
    /** catch-all probes of this group, to hand to other askers of the same domains */
    const probes = new Map<string, (v: boolean | undefined) => void>();
    for (const job of jobs) {
      this.stats.asked += job.emails.length;
      const quirk = providerRule(job.domain, job.hosts, this.o.providers ?? PROVIDER_RULES);
      if (quirk) {
        this.lastProblem = `${job.domain}: ${quirk.name} accepts every address at RCPT time, so its answer proves nothing (not asked)`;
        for (const e of job.emails) found.set(e, { acceptsAll: true, note: this.lastProblem });
        continue;
      }
      const catchAll = await this.cache.getCatchAll(job.domain);
      const ask: string[] = [];
      // asked at once: with a shared cache (Redis) one pipelined round trip, not one per address
      const cached = await Promise.all(job.emails.map((e) => this.cache.getMailbox(e)));
      job.emails.forEach((e, i) => {
        const mailbox = cached[i];
        if (mailbox) {
          found.set(e, { mailbox });
          known.add(e);
        } else ask.push(e);
      });
      let probe: string | undefined;
      if (catchAll === undefined && ask.length > 0 && !this.probing.has(job.domain)) {
        probe = `${randomLocal()}@${job.domain}`;
        this.probing.set(job.domain, new Promise((resolve) => probes.set(job.domain, resolve)));
      }
      states.push({ job, catchAll, ask, probe, probeOpen: probe !== undefined });
    }
    /** why each address is still without an answer, and in words */
    const why = new Map<string, SmtpFailure>();
    const notes = new Map<string, string>();
    const pending = () => states.flatMap((st) => (st.probeOpen ? [st.probe!, ...st.ask] : st.ask));
    const settle = (a: Attempt) => {
      const later = new Set(a.later);
      for (const st of states) {
        for (const e of [st.probe, ...st.ask]) {
          if (e === undefined) continue;
          const outcome = a.outcomes.get(e);
          if (e === st.probe) {
            if (outcome === 'accepted') st.catchAll = true;
            else if (outcome === 'refused') st.catchAll = false;
            continue;
          }
          const mailbox = outcome && MAILBOX[outcome];
          if (mailbox) found.set(e, { mailbox });
          else if (outcome === 'blocked' || outcome === 'unclear') why.set(e, 'blocked');
          else if (later.has(e)) why.set(e, 'greylisted');
          else why.set(e, a.why);
          if (!mailbox && a.note) notes.set(e, a.note);
        }
        // only deferred addresses are asked again; the rest have their answer, or its absence
        st.ask = st.ask.filter((e) => later.has(e));
        st.probeOpen = st.probeOpen && later.has(st.probe!);
      }
    };

    try {
      const hosts = jobs[0]!.hosts;
      const domain = jobs[0]!.domain;
      if (pending().length > 0) settle(await this.attempt(hosts, domain, pending(), signal));
      if (pending().length > 0) {
        // Greylisting, or a host that was busy: ask once more after the delay. Only
        // these domains wait; their session slots are free for the others meanwhile.
        await pause(this.o.retryDelayMs, signal, this.closing.signal);
        if (!this.closing.signal.aborted && !signal?.aborted) settle(await this.attempt(hosts, domain, pending(), signal));
      }
    } finally {
      for (const st of states) {
        probes.get(st.job.domain)?.(st.catchAll);
        if (probes.has(st.job.domain)) this.probing.delete(st.job.domain);
      }
    }
    // another asker's probe of the same domain, when this group made none
    for (const st of states) {
      if (st.catchAll === undefined && st.probe === undefined) st.catchAll = await this.probing.get(st.job.domain);
    }

    // written at once, as they were read
    const writes: Promise<void>[] = [];
    for (const st of states) {
      if (st.catchAll !== undefined && st.probe !== undefined) writes.push(this.cache.setCatchAll(st.job.domain, st.catchAll, this.ttl));
      for (const e of st.job.emails) {
        const f = found.get(e);
        if (f?.mailbox) {
          if (!known.has(e)) writes.push(this.cache.setMailbox(e, f.mailbox, this.ttl));
          if (st.catchAll !== undefined) f.catchAll = st.catchAll;
        } else {
          const failed: SmtpFinding = { failure: why.get(e) ?? 'unreachable' };
          if (st.catchAll !== undefined) failed.catchAll = st.catchAll;
          const note = notes.get(e);
          if (note) failed.note = note;
          found.set(e, failed);
        }
      }
    }
    await Promise.all(writes);
    for (const job of jobs) for (const e of job.emails) this.count(found.get(e));
    return found;
  }

  /** Stops every session at once (QUIT is not waited for): the run is over. */
  close(): void {
    this.closing.abort();
  }

  private count(f: SmtpFinding | undefined): void {
    const s = this.stats;
    if (f?.mailbox === 'accepted') {
      if (f.catchAll) s.catchAll++;
      else s.accepted++;
    } else if (f?.mailbox) s.refused++;
    else s.undetermined++;
  }

  /**
   * One try: the MX hosts in preference order (RFC 5321 §5.1), the next one
   * whenever a host gives no session — refused, timed out, a dead host known
   * from an earlier domain, its budget spent, a banner that never came.
   */
  private async attempt(hosts: readonly string[], domain: string, rcpts: readonly string[], signal?: AbortSignal): Promise<Attempt> {
    let why: SmtpFailure = 'unreachable';
    let note: string | undefined;
    for (const host of hosts.slice(0, MAX_MX)) {
      if (this.closing.signal.aborted) return nothing(why, note);
      const skip = this.hosts.skip(host);
      if (skip) {
        why = skip === 'spent' || skip === 'timeout' ? 'timeout' : 'unreachable';
        note = skip === 'spent' ? `${host}: the time allowed for this mail server (--smtp-budget) is spent` : `${host}: ${SKIPPED[skip]}`;
        continue;
      }
      const result = await this.onHost(host, domain, rcpts, signal);
      if (!('next' in result)) return result;
      why = result.why;
      note = result.note;
    }
    if (note) this.lastProblem = note;
    return nothing(why, note);
  }

  private async onHost(host: string, domain: string, rcpts: readonly string[], signal?: AbortSignal): Promise<Attempt | NoSession> {
    // a host that said "too many connections" gets a pause, then one session at a time
    const busyFor = this.hosts.pause(host);
    if (busyFor > 0) await pause(Math.min(busyFor, this.hosts.remaining(host)), signal, this.closing.signal);
    // waiting for a session slot counts against the host's budget too: a tarpit's queue ends
    const waitMs = Math.max(0, this.hosts.remaining(host));
    const waitSignal = anySignal(signal, this.closing.signal, AbortSignal.timeout(waitMs));
    let lease: SessionLease;
    try {
      lease = await this.budget.acquire(host, waitSignal);
      try {
        await this.hosts.enter(host, waitSignal);
      } catch (err) {
        lease.release();
        throw err;
      }
    } catch (err) {
      signal?.throwIfAborted();
      if (this.closing.signal.aborted) return nothing('timeout');
      void err;
      return { next: true, why: 'timeout', note: `${host}: the time allowed for this mail server (--smtp-budget) ran out waiting for a session` };
    }
    try {
      return await this.slots(() => this.session(host, domain, rcpts, signal));
    } finally {
      this.hosts.leave(host);
      lease.release();
    }
  }

  private async session(host: string, domain: string, rcpts: readonly string[], signal?: AbortSignal): Promise<Attempt | NoSession> {
    // waited in the run-wide queue past the caller's interest (serve's background limit)
    signal?.throwIfAborted();
    if (this.closing.signal.aborted) return nothing('timeout');
    const skip = this.hosts.skip(host);
    if (skip) return { next: true, why: skip === 'spent' || skip === 'timeout' ? 'timeout' : 'unreachable', note: `${host}: ${skip === 'spent' ? 'the time allowed for this mail server (--smtp-budget) is spent' : SKIPPED[skip]}` };
    if (!this.outbound.mayDial()) return nothing('timeout', `outbound SMTP looks blocked (${this.outbound.blockedWhy}): not dialled`);
    let addresses: string[];
    if (this.o.publicOnly && isIpLiteralName(host)) {
      this.outbound.settled();
      return { next: true, why: 'unreachable', note: `${host}: an MX name that is an IP address is not dialled (--smtp-allow-private lifts this)` };
    }
    try {
      addresses = this.o.proxy?.remoteDns ? [host] : await this.o.resolveHost(host);
    } catch {
      addresses = [];
    }
    if (this.o.publicOnly && !this.o.proxy?.remoteDns) {
      const refused = addresses.map(privateAddress).find((r) => r !== undefined);
      addresses = addresses.filter((a) => privateAddress(a) === undefined);
      if (addresses.length === 0 && refused) {
        this.outbound.settled();
        return { next: true, why: 'unreachable', note: `${host}: ${refused}; not dialled (--smtp-allow-private lifts this)` };
      }
    }
    if (addresses.length === 0) {
      this.outbound.settled();
      return { next: true, why: 'unreachable', note: `${host}: the MX host has no address` };
    }
    const deadlineAt = this.hosts.begin(host);
    try {
      let session: SmtpSession;
      try {
        session = await SmtpSession.connect({
          host: addresses[0]!,
          port: this.o.port,
          timeoutMs: Math.min(this.o.timeoutMs, Math.max(1, deadlineAt - Date.now())),
          bannerTimeoutMs: this.o.bannerTimeoutMs ?? Math.max(DEFAULT_BANNER_TIMEOUT_MS, this.o.timeoutMs),
          deadlineAt,
          proxy: this.o.proxy,
          signal: anySignal(signal, this.closing.signal),
        });
      } catch (err) {
        if (!(err instanceof SessionError)) throw err;
        return this.connectFailed(err, host, domain);
      }
      // counted as the server counts them: every connection that opened
      this.stats.sessions++;
      if (this.outbound.opened()) this.o.onWarning('outbound SMTP works again: mailbox checks resumed');
      const ended = this.o.onSession?.();
      let outcome: SessionOutcome = 'failed';
      try {
        let greeting: Reply;
        try {
          greeting = await session.greeting();
        } catch (err) {
          if (!(err instanceof SessionError)) throw err;
          // a banner that never came, or a hang-up before it: the next MX host may talk
          if (err.kind === 'timeout' || err.kind === 'dropped') this.hosts.down(host, err.kind === 'timeout' ? 'timeout' : 'refused');
          if (err.kind === 'protocol') this.hosts.down(host, 'protocol');
          return { next: true, why: failureOf(err.kind), note: `${host}: ${err.message}` };
        }
        const attempt = await this.dialogue(session, greeting, rcpts, host);
        outcome = attempt.ended ?? 'failed';
        if (!(await session.quit()) && outcome !== 'failed') {
          // QUIT got the answer to something else: the replies had slipped, none is believed
          this.hosts.down(host, 'protocol');
          outcome = 'failed';
          return nothing('unreachable', `${host}: the server's replies did not match the commands; its answers are not used`);
        }
        return attempt;
      } finally {
        session.destroy();
        ended?.(outcome);
      }
    } finally {
      this.hosts.end(host);
    }
  }

  private connectFailed(err: SessionError, host: string, domain: string): NoSession {
    if (err.kind === 'proxy-auth' || err.kind === 'proxy') {
      if (this.outbound.broken(`SMTP proxy ${showProxy(this.o.proxy!)}: ${err.message}`) && !this.saidBlocked) {
        this.saidBlocked = true;
        this.o.onWarning(`SMTP proxy ${showProxy(this.o.proxy!)}: ${err.message}; mailbox checks paused (smtp left empty), tried again later`);
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
            (this.o.proxy
              ? `The proxy ${showProxy(this.o.proxy)} may not be allowed to reach port ${this.o.port}`
              : `Many networks block port 25: try --smtp-proxy socks5://host:port`),
        );
      }
    } else this.outbound.settled();
    return { next: true, why: failureOf(err.kind), note: `${host}: ${err.message}` };
  }

  /**
   * The dialogue after the banner. Replies that end the session early leave
   * the recipients not yet answered in `later` (a 4xx, 421) or unanswered (a
   * block of the checker, a timeout, a dropped connection, a protocol error:
   * never evidence). A protocol error also throws away what this session
   * answered: once replies may have slipped, none of them is believed.
   */
  private async dialogue(session: SmtpSession, greeting: Reply, rcpts: readonly string[], host: string): Promise<Attempt> {
    const outcomes = new Map<string, RcptOutcome>();
    const queue = [...rcpts];
    /** answered 4xx in this session: asked again later */
    const deferred: string[] = [];
    const stop = (step: StepOutcome, reply?: Reply): Attempt => {
      if (reply) {
        this.lastProblem = `${host}: ${showReply(reply)}`;
        if (isBusy(reply) || reply.code === 421) this.hosts.busy(host);
      }
      const ended: SessionOutcome = step === 'temporary' ? 'deferred' : step === 'blocked' ? 'blocked' : reply ? 'refused' : 'failed';
      const why: SmtpFailure = step === 'blocked' || step === 'failed' ? (reply ? 'blocked' : 'unreachable') : 'greylisted';
      const attempt: Attempt = { outcomes, later: step === 'temporary' ? [...deferred, ...queue] : deferred, why, ended };
      if (reply) attempt.note = `${host}: ${showReply(reply)}`;
      return attempt;
    };
    try {
      const banner = classifyStep(greeting);
      if (banner !== 'ok') return stop(banner, greeting);
      let hello = await session.command(`EHLO ${this.o.helo}`);
      // RFC 5321 §3.2: an old server that does not know EHLO gets HELO
      if (hello.code >= 500 && hello.code <= 504) hello = await session.command(`HELO ${this.o.helo}`);
      if (classifyStep(hello) !== 'ok') return stop(classifyStep(hello), hello);

      let limit = this.o.maxRecipients ?? 100;
      let first = true;
      while (queue.length > 0) {
        if (!first) {
          const rset = await session.command('RSET');
          if (classifyStep(rset) !== 'ok') return stop(classifyStep(rset), rset);
        }
        first = false;
        const mail = await session.command(`MAIL FROM:<${this.o.from}>`);
        if (classifyStep(mail) !== 'ok') return stop(classifyStep(mail), mail);
        let inTransaction = 0;
        while (queue.length > 0 && inTransaction < limit) {
          const rcpt = queue[0]!;
          const reply = await session.command(`RCPT TO:<${rcpt}>`);
          const outcome = classifyRcpt(reply);
          if (outcome === 'too-many') {
            // a new transaction for the rest, no larger than what this one took
            if (inTransaction === 0) return stop('temporary', reply);
            limit = inTransaction;
            break;
          }
          if (outcome === 'closing' || isBusy(reply)) return stop('temporary', reply);
          if (outcome === 'blocked' || outcome === 'unclear' || outcome === 'temporary') this.lastProblem = `${host}: ${showReply(reply)}`;
          queue.shift();
          inTransaction++;
          if (outcome === 'temporary') deferred.push(rcpt);
          else outcomes.set(rcpt, outcome);
        }
      }
      this.hosts.fine(host);
      return { outcomes, later: deferred, why: 'unreachable', ended: 'completed' };
    } catch (err) {
      if (!(err instanceof SessionError)) throw err;
      this.lastProblem = `${host}: ${err.message}`;
      if (err.kind === 'protocol') {
        this.hosts.down(host, 'protocol');
        return { ...nothing('unreachable', `${host}: ${err.message}; this session's answers are not used`), ended: 'failed' };
      }
      // a timeout or a dropped connection: what was answered stands, the rest stays undetermined
      return { ...stop('failed'), why: failureOf(err.kind), note: `${host}: ${err.message}` };
    }
  }
}

/** The row's reason for a session that failed this way. */
function failureOf(kind: FailureKind): SmtpFailure {
  return kind === 'connect-timeout' || kind === 'timeout' || kind === 'budget' ? 'timeout' : 'unreachable';
}

const MAILBOX: Partial<Record<RcptOutcome, MailboxFinding>> = { accepted: 'accepted', refused: 'refused', full: 'full' };

/** A local part no one has: `x` and 19 random letters and digits. */
function randomLocal(): string {
  return 'x' + randomBytes(15).toString('base64url').toLowerCase().replace(/[^a-z0-9]/g, '0').slice(0, 19);
}

/** Waits `ms`; ends early (without an error) when any signal aborts. */
function pause(ms: number, ...signals: (AbortSignal | undefined)[]): Promise<void> {
  return delay(ms, anySignal(...signals)).catch(() => undefined);
}

function anySignal(...signals: (AbortSignal | undefined)[]): AbortSignal {
  return AbortSignal.any(signals.filter((s): s is AbortSignal => s !== undefined));
}
