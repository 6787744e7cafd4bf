import { randomBytes } from 'node:crypto';
import pLimit from 'p-limit';
import { classifyRcpt, classifyStep, type RcptOutcome, type StepOutcome } from './classify.js';
import { providerRule, PROVIDER_RULES, type ProviderRule } from './providers.js';
import { showProxy, type SocksProxy } from './proxy.js';
import { showReply, type Reply } from './reply.js';
import { SessionError, SmtpSession } from './session.js';
import type { SmtpStats } from '../../../summary.js';
import type { SmtpFailure } from '../../../verdict.js';
import { MemorySessionBudget, MemorySmtpCache, type MailboxFinding, type SessionBudget, type SmtpCache } from './stores.js';

export interface SmtpCheckOptions {
  /** the name given in EHLO/HELO */
  helo: string;
  /** the MAIL FROM reverse path; '' is the null path `<>` */
  from: string;
  port: number;
  /** per reply (the banner included) and per TCP/proxy handshake */
  timeoutMs: number;
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

/** What the check found for one address; both fields absent when it could not tell. */
export interface SmtpFinding {
  mailbox?: MailboxFinding;
  catchAll?: boolean;
  /** why the check could not tell, when it could not (a row's reason: smtp_timeout, greylisted, ...) */
  failure?: SmtpFailure;
}

/** A domain's addresses and its mail hosts, best preference first. */
export interface DomainJob {
  domain: string;
  hosts: readonly string[];
  emails: readonly string[];
}


/** first connections that must all fail before outbound SMTP is called blocked */
const BLOCK_PROBE = 3;
const DEFAULT_TTL_MS = 30 * 60_000;

/** one domain's progress through the check */
interface DomainState {
  job: DomainJob;
  catchAll: boolean | undefined;
  /** addresses still to ask */
  ask: string[];
  /** the random address of the catch-all probe, when the domain's answer is not cached */
  probe: string | undefined;
  /** the probe still wants an answer */
  probeOpen: boolean;
}

/** how one try at a list of recipients ended, per recipient */
interface Attempt {
  outcomes: Map<string, RcptOutcome>;
  /** no answer worth keeping yet: ask again once, later (greylisting, 421, 4xx) */
  later: string[];
  /** how the session ended (metrics); absent when none opened */
  ended?: SessionOutcome;
}

/**
 * The mailbox check: for each domain, sessions to its MX hosts that carry
 * many recipients (one MAIL FROM, up to 100 RCPT TO per transaction, RSET
 * between), a catch-all probe once per domain, one retry on the next MX host
 * when a host will not connect, one more try after a delay for greylisting —
 * and never DATA. Sessions are bounded per MX host (the SessionBudget) and in
 * all (`concurrency`).
 */
export class SmtpChecker {
  readonly stats: SmtpStats = { asked: 0, accepted: 0, refused: 0, catchAll: 0, undetermined: 0, sessions: 0 };
  private readonly cache: SmtpCache;
  private readonly budget: SessionBudget;
  private readonly slots: ReturnType<typeof pLimit>;
  private readonly closing = new AbortController();
  private readonly ttl: number;
  /** connections that failed to open before any opened */
  private failedFirst = 0;
  private everOpened = false;
  /** outbound SMTP is unusable for this run (port 25 blocked, proxy refused us) */
  private blocked = false;
  /** why the last answer could not be had, for `check` to say (e.g. "mx.example.com: 554 5.7.1 ...") */
  lastProblem: string | undefined;

  constructor(private readonly o: SmtpCheckOptions) {
    this.cache = o.cache ?? new MemorySmtpCache();
    this.budget = o.budget ?? new MemorySessionBudget(o.perHost);
    this.slots = pLimit(o.concurrency);
    this.ttl = o.cacheTtlMs ?? DEFAULT_TTL_MS;
  }

  /** Findings for a domain's addresses (lower-case domain). Never rejects, unless `signal` aborts. */
  checkDomain(job: DomainJob, signal?: AbortSignal): Promise<Map<string, SmtpFinding>> {
    return this.checkDomains([job], signal);
  }

  /**
   * Findings for the addresses of several domains, by address. Domains with
   * the same MX hosts (a hosting provider's customers) share their sessions:
   * their recipients go to the host together.
   */
  async checkDomains(
    jobs: readonly DomainJob[],
    signal?: AbortSignal,
    /** called as each group of domains is done, before all are */
    onGroup?: (found: ReadonlyMap<string, SmtpFinding>) => void,
  ): Promise<Map<string, SmtpFinding>> {
    const groups = new Map<string, DomainJob[]>();
    for (const job of jobs) {
      const key = job.hosts.join(' ');
      let g = groups.get(key);
      if (!g) groups.set(key, (g = []));
      g.push(job);
    }
    const found = new Map<string, SmtpFinding>();
    await Promise.all(
      [...groups.values()].map(async (group) => {
        const mine = await this.checkGroup(group, signal);
        onGroup?.(mine);
        for (const [email, f] of mine) found.set(email, f);
      }),
    );
    return found;
  }

  private async checkGroup(jobs: readonly DomainJob[], signal?: AbortSignal): Promise<Map<string, SmtpFinding>> {
    const found = new Map<string, SmtpFinding>();
    /** read from the cache: not written back, so a finding is asked again once its TTL is over */
    const known = new Set<string>();
    const states: DomainState[] = [];
    for (const job of jobs) {
      this.stats.asked += job.emails.length;
      if (this.blocked) continue;
      const quirk = providerRule(job.domain, job.hosts, this.o.providers ?? PROVIDER_RULES);
      if (quirk) {
        this.lastProblem = `${job.domain}: ${quirk.name} accepts every address at RCPT time, so its answer proves nothing (not asked)`;
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
      const probe = catchAll === undefined ? `${randomLocal()}@${job.domain}` : undefined;
      states.push({ job, catchAll, ask, probe, probeOpen: probe !== undefined });
    }
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
        }
        st.ask = st.ask.filter((e) => later.has(e));
        st.probeOpen = st.probeOpen && later.has(st.probe!);
      }
    };

    const hosts = jobs[0]!.hosts;
    if (pending().length > 0) settle(await this.attempt(hosts, pending(), signal));
    if (pending().length > 0 && !this.blocked) {
      // Greylisting: ask once more after the delay. Only these domains wait;
      // their session slots are free for the others meanwhile.
      await delay(this.o.retryDelayMs, signal, this.closing.signal);
      if (!this.closing.signal.aborted) settle(await this.attempt(hosts, pending(), signal));
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
        } else if (st.catchAll !== undefined) {
          found.set(e, { catchAll: st.catchAll });
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

  /** One try: the first MX host, and the next one if the first will not connect. */
  private async attempt(hosts: readonly string[], rcpts: readonly string[], signal?: AbortSignal): Promise<Attempt> {
    const nothing: Attempt = { outcomes: new Map(), later: [] };
    for (const host of hosts.slice(0, 2)) {
      if (this.blocked || this.closing.signal.aborted) return nothing;
      const result = await this.onHost(host, rcpts, signal);
      if (result !== 'no-connection') return result;
    }
    return nothing;
  }

  private async onHost(host: string, rcpts: readonly string[], signal?: AbortSignal): Promise<Attempt | 'no-connection'> {
    const lease = await this.budget.acquire(host, signal);
    try {
      return await this.slots(async () => {
        if (this.blocked || this.closing.signal.aborted) return { outcomes: new Map(), later: [] };
        const addresses = this.o.proxy?.remoteDns ? [host] : await this.o.resolveHost(host);
        if (addresses.length === 0) return 'no-connection';
        let opened: Awaited<ReturnType<typeof SmtpSession.open>>;
        try {
          opened = await SmtpSession.open({
            host: addresses[0]!,
            port: this.o.port,
            timeoutMs: this.o.timeoutMs,
            proxy: this.o.proxy,
            signal: anySignal(signal, this.closing.signal),
          });
        } catch (err) {
          if (!(err instanceof SessionError)) throw err;
          this.lastProblem = `${host}: ${err.message}`;
          this.openFailed(err, host);
          return err.kind === 'connect' ? 'no-connection' : { outcomes: new Map(), later: [] };
        }
        this.stats.sessions++;
        this.everOpened = true;
        const ended = this.o.onSession?.();
        const { session, greeting } = opened;
        let outcome: SessionOutcome = 'failed';
        try {
          const attempt = await this.dialogue(session, greeting, rcpts, host);
          outcome = attempt.ended ?? 'failed';
          return attempt;
        } finally {
          await session.quit();
          ended?.(outcome);
        }
      });
    } finally {
      lease.release();
    }
  }

  private openFailed(err: SessionError, host: string): void {
    if (err.kind === 'proxy-auth' || err.kind === 'proxy') {
      if (!this.blocked) {
        this.blocked = true;
        this.o.onWarning(`SMTP proxy ${showProxy(this.o.proxy!)}: ${err.message}; mailbox checks skipped for the rest of the run (smtp left empty)`);
      }
      return;
    }
    if (this.everOpened || this.blocked) return;
    if (++this.failedFirst >= BLOCK_PROBE) {
      this.blocked = true;
      this.o.onWarning(
        `outbound SMTP looks blocked: the first ${BLOCK_PROBE} connections to mail servers on port ${this.o.port} failed to open ` +
          `(last: ${host}, ${err.message}); mailbox checks skipped for the rest of the run (smtp left empty). ` +
          (this.o.proxy
            ? `The proxy ${showProxy(this.o.proxy)} may not be allowed to reach port ${this.o.port}`
            : `Many networks block port 25: try --smtp-proxy socks5://host:port`),
      );
    }
  }

  /**
   * The dialogue after the banner. Replies that end the session early leave
   * the recipients not yet answered in `later` (a 4xx, 421) or unanswered (a
   * block of the checker, a timeout, a dropped connection: never evidence).
   */
  private async dialogue(session: SmtpSession, greeting: Reply, rcpts: readonly string[], host: string): Promise<Attempt> {
    const outcomes = new Map<string, RcptOutcome>();
    const queue = [...rcpts];
    /** answered 4xx in this session: asked again later */
    const deferred: string[] = [];
    const stop = (step: StepOutcome, reply?: Reply): Attempt => {
      if (reply) this.lastProblem = `${host}: ${showReply(reply)}`;
      const ended: SessionOutcome = step === 'temporary' ? 'deferred' : step === 'blocked' ? 'blocked' : reply ? 'refused' : 'failed';
      return { outcomes, later: step === 'temporary' ? [...deferred, ...queue] : deferred, ended };
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
            if (inTransaction === 0) return stop('temporary');
            limit = inTransaction;
            break;
          }
          if (outcome === 'closing') return stop('temporary', reply);
          if (outcome === 'blocked' || outcome === 'unclear' || outcome === 'temporary') this.lastProblem = `${host}: ${showReply(reply)}`;
          queue.shift();
          inTransaction++;
          if (outcome === 'temporary') deferred.push(rcpt);
          else outcomes.set(rcpt, outcome);
        }
      }
      return { outcomes, later: deferred, ended: 'completed' };
    } catch (err) {
      // a timeout or a dropped connection: what was answered stands, the rest stays undetermined
      if (err instanceof SessionError) {
        this.lastProblem = `${host}: ${err.message}`;
        return stop('failed');
      }
      throw err;
    }
  }
}

const MAILBOX: Partial<Record<RcptOutcome, MailboxFinding>> = { accepted: 'accepted', refused: 'refused', full: 'full' };

/** A local part no one has: `x` and 19 random letters and digits. */
function randomLocal(): string {
  return 'x' + randomBytes(15).toString('base64url').toLowerCase().replace(/[^a-z0-9]/g, '0').slice(0, 19);
}

function delay(ms: number, ...signals: (AbortSignal | undefined)[]): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    const live = signals.filter((s): s is AbortSignal => s !== undefined);
    function done() {
      clearTimeout(timer);
      for (const s of live) s.removeEventListener('abort', done);
      resolve();
    }
    for (const s of live) {
      if (s.aborted) return done();
      s.addEventListener('abort', done, { once: true });
    }
  });
}

function anySignal(...signals: (AbortSignal | undefined)[]): AbortSignal {
  return AbortSignal.any(signals.filter((s): s is AbortSignal => s !== undefined));
}
