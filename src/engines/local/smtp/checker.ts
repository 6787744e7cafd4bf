import { randomBytes } from 'node:crypto';
import { abortable } from '../../../time/waits.js';
import type { RcptOutcome } from './classify.js';
import type { SmtpCheckOptions, SmtpFinding } from './check-options.js';
import { systemClock, type Clock } from '../../../time/clock.js';
import { pause } from '../../../time/waits.js';
import type { Attempt } from './dialogue.js';
import { Dialler, MAX_MX } from './dialler.js';
import { Joining, type DomainJob } from './joining.js';
import { providerRule, PROVIDER_RULES } from './providers.js';
import { MemorySmtpCache, type MailboxFinding, type SmtpCache } from './stores.js';
import type { SmtpStats } from '../../../summary.js';
import type { SmtpFailure } from '../../../verdict.js';

export { DEFAULT_BANNER_TIMEOUT_MS, DEFAULT_HOST_BUDGET_MS } from './dialler.js';
export type { SmtpCheckOptions, SmtpFinding } from './check-options.js';
export type { DomainJob } from './joining.js';
export type { SessionOutcome } from './dialogue.js';

const DEFAULT_TTL_MS = 30 * 60_000;
const MAILBOX: Partial<Record<RcptOutcome, MailboxFinding>> = { accepted: 'accepted', refused: 'refused', disabled: 'disabled', full: 'full' };
/** why an answer that says nothing of the mailbox left it undetermined */
const FAILURE: Partial<Record<RcptOutcome, SmtpFailure>> = {
  blocked: 'blocked',
  unclear: 'blocked',
  sender: 'sender-refused',
  starttls: 'unreachable',
  'no-utf8': 'no-utf8',
};

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

/**
 * The mailbox check, as a strategy over its parts: for each domain, what to
 * ask (its addresses not cached, a catch-all probe once per domain), asked
 * through the Dialler (admission, connecting, the dialogue) once, and once
 * more after a delay for what was deferred (greylisting); the answers read as
 * findings, cached. Identical checks asked at once (serve) are joined
 * (joining.ts) and share one probe.
 */
export class SmtpChecker {
  readonly stats: SmtpStats = { asked: 0, accepted: 0, refused: 0, catchAll: 0, undetermined: 0, sessions: 0 };
  private readonly cache: SmtpCache;
  private readonly closing = new AbortController();
  private readonly ttl: number;
  private readonly clock: Clock;
  private readonly dialler: Dialler;
  private readonly joining: Joining<SmtpFinding>;
  /** catch-all probes in progress, by domain: a second asker waits for the first */
  private readonly probing = new Map<string, Promise<boolean | undefined>>();
  /** why the last answer could not be had, for `check` to say (e.g. "mx.example.com: 554 5.7.1 ...") */
  lastProblem: string | undefined;

  constructor(private readonly o: SmtpCheckOptions) {
    this.clock = o.clock ?? systemClock;
    this.cache = o.cache ?? new MemorySmtpCache({ clock: this.clock });
    this.ttl = o.cacheTtlMs ?? DEFAULT_TTL_MS;
    this.joining = new Joining(o.maxPending);
    this.dialler = new Dialler(
      {
        ...o,
        maxRecipients: o.maxRecipients ?? 100,
        clock: this.clock,
        onOpened: () => this.stats.sessions++,
        onProblem: (p) => (this.lastProblem = p),
      },
      this.closing.signal,
    );
  }

  /** 'blocked' while outbound SMTP is judged unusable (it is tried again later); serve's /readyz shows it */
  get state(): 'ok' | 'blocked' {
    return this.dialler.outbound.blockedWhy === undefined ? 'ok' : 'blocked';
  }

  /** addresses whose check is under way now */
  get pending(): number {
    return this.joining.size;
  }

  /** Findings for a domain's addresses (lower-case domain). Never rejects, unless `signal` aborts. */
  checkDomain(job: DomainJob, signal?: AbortSignal): Promise<Map<string, SmtpFinding>> {
    return this.checkDomains([job], signal);
  }

  /**
   * Findings for the addresses of several domains, by address. Domains whose
   * MX hosts are the same servers (a hosting provider's customers, whether
   * their MX records name its host or a name of their own that points at it)
   * share their sessions: their recipients go to the server together, in as
   * few connections as it takes. An address already being checked (another
   * request, in serve) is not asked again: its finding is waited for.
   */
  async checkDomains(
    jobs: readonly DomainJob[],
    signal?: AbortSignal,
    /** called as each group of domains is done, before all are */
    onGroup?: (found: ReadonlyMap<string, SmtpFinding>) => void,
  ): Promise<Map<string, SmtpFinding>> {
    const found = new Map<string, SmtpFinding>();
    const claim = this.joining.claim(jobs);
    if (claim.overflow.length > 0) {
      // not asked: as undetermined as a check that ran out of time, and asked again by the next request
      const overflow = new Map<string, SmtpFinding>();
      for (const e of claim.overflow) {
        this.stats.asked++;
        this.stats.undetermined++;
        overflow.set(e, { failure: 'timeout', note: `the mailbox check has ${this.o.maxPending} addresses pending, its most: not checked; ask again later` });
      }
      onGroup?.(overflow);
      for (const [e, f] of overflow) found.set(e, f);
    }
    const groups = new Map<string, DomainJob[]>();
    const keys = await Promise.all(claim.mine.map((job) => this.serversOf(job.hosts)));
    claim.mine.forEach((job, i) => {
      const g = groups.get(keys[i]!);
      if (g) g.push(job);
      else groups.set(keys[i]!, [job]);
    });
    try {
      await Promise.all([
        ...[...groups.values()].map(async (group) => {
          const theirs = await this.checkGroup(group, signal);
          claim.release(
            group.flatMap((j) => j.emails),
            theirs,
          );
          onGroup?.(theirs);
          for (const [email, f] of theirs) found.set(email, f);
        }),
        ...claim.joined.map(async ([e, running]) => {
          const f = await abortable(this.clock, running, signal);
          if (!f) return;
          found.set(e, f);
          onGroup?.(new Map([[e, f]]));
        }),
      ]);
    } finally {
      claim.releaseAll();
    }
    return found;
  }

  /**
   * The servers a domain's mail goes to, as a key: its MX hosts' addresses in
   * preference order (the dialler resolves them through the same cached
   * DNS). Three customers whose MX names (an MX, a CNAME, a `mail.` name)
   * point at one server get one key, so one session asks for all three, not
   * three sessions that a server limiting connections per minute turns away.
   * A host without an address, or with a proxy that resolves names itself,
   * stands for itself.
   */
  private async serversOf(hosts: readonly string[]): Promise<string> {
    if (this.o.proxy?.remoteDns) return hosts.join(' ');
    const each = await Promise.all(hosts.slice(0, MAX_MX).map((h) => this.o.resolveHost(h).catch(() => [] as string[])));
    return each.map((addresses, i) => (addresses.length > 0 ? [...new Set(addresses)].sort().join(',') : hosts[i])).join(' ');
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
            else if (outcome === 'refused' || outcome === 'disabled') st.catchAll = false;
            continue;
          }
          const mailbox = outcome && MAILBOX[outcome];
          if (mailbox) found.set(e, { mailbox });
          else why.set(e, (outcome && FAILURE[outcome]) ?? (later.has(e) ? 'greylisted' : a.why));
          if (!mailbox && a.note) notes.set(e, a.note);
        }
        // only deferred addresses are asked again; the rest have their answer, or its absence
        st.ask = st.ask.filter((e) => later.has(e));
        st.probeOpen = st.probeOpen && later.has(st.probe!);
      }
    };

    try {
      const { hosts, domain } = jobs[0]!;
      if (pending().length > 0) settle(await this.dialler.attempt(hosts, domain, pending(), signal));
      if (pending().length > 0) {
        // Greylisting, or a host that was busy: ask once more after the delay. Only
        // these domains wait; their session slots are free for the others meanwhile.
        await pause(this.clock, this.o.retryDelayMs, signal, this.closing.signal);
        if (!this.closing.signal.aborted && !signal?.aborted) settle(await this.dialler.attempt(hosts, domain, pending(), signal));
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
    await this.keep(states, found, known, why, notes);
    for (const job of jobs) for (const e of job.emails) this.count(found.get(e));
    return found;
  }

  /** Each address's finding, its failure where it has none; new answers written to the cache at once, as they were read. */
  private async keep(
    states: DomainState[],
    found: Map<string, SmtpFinding>,
    known: Set<string>,
    why: Map<string, SmtpFailure>,
    notes: Map<string, string>,
  ): Promise<void> {
    const writes: Promise<void>[] = [];
    for (const st of states) {
      if (st.catchAll !== undefined && st.probe !== undefined) writes.push(this.cache.setCatchAll(st.job.domain, st.catchAll, this.ttl));
      for (const e of st.job.emails) {
        const f = found.get(e);
        if (f?.mailbox) {
          if (!known.has(e)) writes.push(this.cache.setMailbox(e, f.mailbox, this.ttl));
          if (st.catchAll !== undefined) f.catchAll = st.catchAll;
          continue;
        }
        const failed: SmtpFinding = { failure: why.get(e) ?? 'unreachable' };
        if (st.catchAll !== undefined) failed.catchAll = st.catchAll;
        const note = notes.get(e);
        if (note) failed.note = note;
        found.set(e, failed);
      }
    }
    await Promise.all(writes);
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
}

/** A local part no one has: `x` and 19 random letters and digits. */
function randomLocal(): string {
  return (
    'x' +
    randomBytes(15)
      .toString('base64url')
      .toLowerCase()
      .replace(/[^a-z0-9]/g, '0')
      .slice(0, 19)
  );
}
