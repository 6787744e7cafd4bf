import { stopwatch, systemClock, type Clock } from '../../time/clock.js';
import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import pLimit from 'p-limit';
import type { DnsOutcome } from './decide.js';
import type { SharedCache } from './shared-cache.js';
import { parseDnsServer } from './dns-server.js';

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
 * with our own timer; the late answer, if any, is ignored. And c-ares (1.32
 * on, 1.34 in Node 20.20) keeps its own time: once a resolver has had a few
 * answers, a question times out after 5 times the latency it measured lately
 * (at least 250 ms), whatever timeout it was given — `maxTimeout` only caps
 * that. A burst of our own questions that slows the server down (the first
 * lookups of a `serve` burst) then timed out after ~1 s with --dns-timeout
 * 5000: our own doing, not the domains'. So when c-ares gives up on a
 * question before our timeout, the resolver is replaced by a new one, which
 * has measured nothing and so waits for our timeout, and the question is
 * asked again on it (test/engines/local/dns.test.ts: 40 lookups answered in
 * 1.2 s after 4 fast ones were all unanswered; now all are answered).
 *
 * Broken DNS is not evidence: on a machine without internet the system
 * resolver answers NXDOMAIN for every name. Before a negative answer counts,
 * a probe (once per engine) asks for the root zone's NS records, which every
 * working resolver has; and for a name under `.invalid` (RFC 6761), which no
 * honest resolver resolves. A resolver that fails the first is unusable (every
 * DNS-dependent answer becomes `unanswered`); one that resolves the second
 * invents addresses, so an A-only answer from it proves nothing. The probe is
 * not the only witness: a resolver that hands out real MX records works,
 * whatever it says of the root zone (some refuse that question); and one that
 * answers the root zone from its cache while every real question fails (the
 * link is down) does not. So the run judges DNS by the answers it actually
 * gets (`usable()`): the probe, and the last lookups — when almost all of
 * them got no answer (SERVFAIL, time-outs), DNS is unusable whatever the
 * probe said — and the rows and the warning agree.
 */
export interface DnsOptions {
  /** `host[:port]`, host an IP address; the system resolver when absent */
  server?: string;
  timeoutMs: number;
  concurrency: number;
  onWarning: (message: string) => void;
  /** what the cache's expiry, the witness, the re-test and the time-out of a question are timed on (a fake one in tests) */
  clock?: Clock;
  /** answers shared with other processes (serve --redis), asked before DNS */
  shared?: SharedCache;
  /** where each lookup was answered from (metrics) */
  onCache?: (from: 'memory' | 'shared' | 'dns') => void;
  /** a DNS question that got no answer (a c-ares code: ETIMEOUT, ESERVFAIL, ECONNREFUSED…), for the metrics */
  onFailure?: (code: string) => void;
}

interface Probe {
  usable: boolean;
  invents: boolean;
  /** what the root zone's question got, for the warning */
  why: string;
}

const MAX_CACHED_DOMAINS = 200_000;
/** how long an answer (or a probe that found DNS working) is reused */
export const ANSWER_TTL_MS = 10 * 60_000;
/** how long "DNS did not answer" (or a probe that found DNS broken) stands before DNS is asked again */
export const UNANSWERED_TTL_MS = 30_000;
/**
 * DNS is judged unusable when, of the last RECENT_LOOKUPS domains looked up,
 * at least MIN_UNANSWERED and UNUSABLE_SHARE of them got no answer: a few dead
 * domains are a list's own (their servers SERVFAIL), nearly all of them the
 * resolver's trouble. A domain whose servers fail shows no sooner than three.
 */
const RECENT_LOOKUPS = 32;
/** a question c-ares gave up on with less than this left of our timeout is not asked again */
const MIN_ASK_AGAIN_MS = 50;
const MIN_UNANSWERED = 3;
const UNUSABLE_SHARE = 0.9;
/**
 * DNS that stops answering mid-run shows as lookups in a row that got no
 * answer while none came (a list's dead domains are scattered among answers):
 * after this many, or once the ring above says nearly all failed, the resolver
 * is asked about a domain that answered before, under a fresh name no cache
 * holds (see witnessed()). DNS is unusable only if that gets no answer either:
 * dead domains in a row — a list of them, or a client of `serve` sending
 * nothing else — never make it so while the resolver answers about a domain
 * that works. Before any domain answered, the ring alone decides.
 */
const WITNESS_AFTER = MIN_UNANSWERED;

interface Cached<T> {
  value: Promise<T>;
  /** epoch ms; Infinity while the lookup runs */
  expires: number;
}

/** the outcomes other processes may reuse (a value from another version is a miss) */
const SHAREABLE: readonly DnsOutcome[] = ['mx', 'implicit-mx', 'null-mx', 'nxdomain', 'no-mail-host'];

type Answer<T> = { ok: T } | { code: string };

/** A DomainAnswer another process stored, or undefined for anything else (another version's value is a miss). */
function readShared(value: string): DomainAnswer | undefined {
  let a: unknown;
  try {
    a = JSON.parse(value);
  } catch {
    return undefined;
  }
  const { outcome, hosts } = (a ?? {}) as Partial<DomainAnswer>;
  if (!SHAREABLE.includes(outcome as DnsOutcome) || !Array.isArray(hosts) || !hosts.every((h) => typeof h === 'string')) return undefined;
  return { outcome: outcome as DnsOutcome, hosts };
}

/** What DNS said of a domain, and where its mail goes: MX hosts by preference, or the domain itself (implicit MX). */
export interface DomainAnswer {
  outcome: DnsOutcome;
  /** lower case, no trailing dot; empty unless outcome is mx or implicit-mx */
  hosts: string[];
}

const NO_HOSTS: string[] = [];

export class DomainDns {
  /** replaced when c-ares gives up on a question before our timeout (see ask) */
  private resolver: dns.Resolver;
  /** questions in flight per resolver: a replaced one is kept (for close) until its last is through */
  private readonly inFlight = new Map<dns.Resolver, number>();
  private readonly cache = new Map<string, Cached<DomainAnswer>>();
  private readonly hostAddresses = new Map<string, Cached<string[]>>();
  private readonly limit: ReturnType<typeof pLimit>;
  private probe: Cached<Probe> | undefined;
  /** what the last probe found */
  private lastProbe: Probe | undefined;
  /** an MX answer with real hosts came since the last probe began: the resolver reaches the DNS */
  private answeredMx = false;
  /** what usable() last said, so a warning is given when that changes, not at every batch */
  private judged: boolean | undefined;
  /** the last lookups that reached DNS: answered (true) or not; a ring of RECENT_LOOKUPS */
  private readonly recent: boolean[] = [];
  private recentAt = 0;
  /** the domain a lookup last got no answer for: what retest() asks again */
  private lastUnanswered: string | undefined;
  /** lookups that got an answer, so far */
  private answers = 0;
  /** the domain that exists a lookup last got an answer for: the witness of an outage (see WITNESS_AFTER) */
  private lastAnswered: string | undefined;
  /** lookups in a row that got no answer while no other lookup got one */
  private unansweredRun = 0;
  /** the witness asked since the last answer came, and when (epoch ms); witnessFailed: it got no answer either */
  private witness: Promise<boolean> | undefined;
  private witnessAt = 0;
  private witnessFailed = false;
  /** epoch ms before which retest() does nothing */
  private nextRetest = 0;
  private readonly clock: Clock;
  private closed = false;
  /** DNS questions sent (the probe's included) */
  queries = 0;

  constructor(private readonly options: DnsOptions) {
    this.resolver = this.newResolver(options.timeoutMs);
    this.limit = pLimit(options.concurrency);
    this.clock = options.clock ?? systemClock;
  }

  private newResolver(timeoutMs: number): dns.Resolver {
    const resolver = new dns.Resolver({ timeout: Math.max(1, Math.round(timeoutMs)), tries: 1 });
    if (this.options.server !== undefined) resolver.setServers([parseDnsServer(this.options.server)]);
    return resolver;
  }

  /** `domain` in ASCII, lower case. Never rejects. */
  lookup(domain: string): Promise<DnsOutcome> {
    return this.answer(domain).then((a) => a.outcome);
  }

  /** The outcome and the mail hosts of `domain` (ASCII, lower case). Never rejects. */
  answer(domain: string): Promise<DomainAnswer> {
    const had = this.cache.get(domain);
    if (had && had.expires > this.clock.now()) {
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
      (a) => sharedTtlMs ?? (a.outcome === 'unanswered' ? UNANSWERED_TTL_MS : ANSWER_TTL_MS),
    );
    this.cache.set(domain, entry);
    return entry.value;
  }

  /**
   * The IPv4 (then IPv6) addresses of a mail host, through the same resolver
   * as the MX lookups (so `--dns-server` holds for the SMTP check too); empty
   * when DNS gives none or does not answer. Never rejects.
   */
  addressesOf(host: string): Promise<string[]> {
    if (isIP(host)) return Promise.resolve([host]);
    const had = this.hostAddresses.get(host);
    if (had && had.expires > this.clock.now()) return had.value;
    if (this.hostAddresses.size >= MAX_CACHED_DOMAINS) this.hostAddresses.delete(this.hostAddresses.keys().next().value!);
    const entry = this.kept(
      () =>
        this.limit(async () => {
          const [a, aaaa] = await Promise.all([this.ask((r) => r.resolve4(host)), this.ask((r) => r.resolve6(host))]);
          return [...('ok' in a ? a.ok : []), ...('ok' in aaaa ? aaaa.ok : [])];
        }),
      (ips) => (ips.length > 0 ? ANSWER_TTL_MS : UNANSWERED_TTL_MS),
    );
    this.hostAddresses.set(host, entry);
    return entry.value;
  }

  /** Starts `run`, whose answer is then kept for `ttl(answer)` ms. */
  private kept<T>(run: () => Promise<T>, ttl: (answer: T) => number): Cached<T> {
    const entry: Cached<T> = { value: run(), expires: Infinity };
    void entry.value.then((answer) => {
      entry.expires = this.clock.now() + ttl(answer);
    });
    return entry;
  }

  /**
   * The shared cache first, then DNS. "DNS did not answer" is this process's
   * trouble, not a fact about the domain: it is never shared.
   */
  private async sharedOrDns(domain: string, sharedTtl: (ms: number) => void): Promise<DomainAnswer> {
    const shared = this.options.shared;
    const hit = shared && (await shared.get(domain));
    const known = hit ? readShared(hit.value) : undefined;
    if (hit && known) {
      sharedTtl(hit.ttlMs);
      this.options.onCache?.('shared');
      return known;
    }
    this.options.onCache?.('dns');
    const answer = await this.limit(() => this.lookupUncached(domain));
    if (shared && SHAREABLE.includes(answer.outcome)) void shared.set(domain, JSON.stringify(answer), ANSWER_TTL_MS);
    return answer;
  }

  close(): void {
    this.closed = true;
    this.limit.clearQueue();
    this.resolver.cancel();
    for (const r of this.inFlight.keys()) r.cancel();
  }

  private async lookupUncached(domain: string): Promise<DomainAnswer> {
    if (this.closed) return { outcome: 'unanswered', hosts: NO_HOSTS };
    const probe = this.runProbe();
    const answersBefore = this.answers;
    const raw = await this.classify(domain);
    this.noteLookup(domain, raw.outcome, answersBefore);
    const only = (outcome: DnsOutcome): DomainAnswer => ({ outcome, hosts: NO_HOSTS });
    if (raw.outcome === 'mx') this.answeredMx = true;
    if (raw.outcome === 'mx' || raw.outcome === 'null-mx') return raw;
    // an unanswered lookup waits for the probe too, so that usable() has its verdict by the end of the batch
    const { usable, invents } = await probe;
    // and for the witness, when answers have stopped coming
    if (raw.outcome === 'unanswered') return this.witnessed().then(() => raw);
    if (!usable && !this.answeredMx) return only('unanswered');
    if (raw.outcome === 'implicit-mx' && invents) return only('unanswered');
    return raw;
  }

  private async classify(domain: string): Promise<DomainAnswer> {
    const mx = await this.ask((r) => r.resolveMx(domain));
    if ('ok' in mx) {
      if (mx.ok.length === 0) return this.implicit(domain);
      // RFC 7505: a lone MX of "." says the domain accepts no mail
      const real = mx.ok.filter((r) => r.exchange !== '' && r.exchange !== '.');
      if (real.length === 0) return { outcome: 'null-mx', hosts: NO_HOSTS };
      // RFC 5321 §5.1: lowest preference first; equal ones in the order given
      const hosts = [...new Set(real.sort((a, b) => a.priority - b.priority).map((r) => r.exchange.toLowerCase().replace(/\.$/, '')))];
      return { outcome: 'mx', hosts };
    }
    if (mx.code === dns.NOTFOUND) return { outcome: 'nxdomain', hosts: NO_HOSTS };
    if (mx.code === dns.NODATA) return this.implicit(domain);
    return { outcome: 'unanswered', hosts: NO_HOSTS };
  }

  /** RFC 5321 §5.1: no MX, but an A or AAAA record is the implicit MX. */
  private async implicit(domain: string): Promise<DomainAnswer> {
    const [a, aaaa] = await Promise.all([this.ask((r) => r.resolve4(domain)), this.ask((r) => r.resolve6(domain))]);
    const has = (r: Answer<string[]>) => 'ok' in r && r.ok.length > 0;
    if (has(a) || has(aaaa)) return { outcome: 'implicit-mx', hosts: [domain] };
    const negative = (r: Answer<string[]>) => 'ok' in r || r.code === dns.NODATA || r.code === dns.NOTFOUND;
    return { outcome: negative(a) && negative(aaaa) ? 'no-mail-host' : 'unanswered', hosts: NO_HOSTS };
  }

  private runProbe(): Promise<Probe> {
    if (this.probe && this.probe.expires > this.clock.now()) return this.probe.value;
    this.answeredMx = false;
    this.probe = this.kept(
      () => this.probeNow(),
      (p) => (p.usable ? ANSWER_TTL_MS : UNANSWERED_TTL_MS),
    );
    return this.probe.value;
  }

  private async probeNow(): Promise<Probe> {
    const nonce = Math.random().toString(36).slice(2, 10);
    const [root, bogus] = await Promise.all([this.ask((r) => r.resolveNs('.')), this.ask((r) => r.resolve4(`mailsift-probe-${nonce}.invalid`))]);
    const usable = 'ok' in root && root.ok.length > 0;
    const invents = 'ok' in bogus && bogus.ok.length > 0;
    const before = this.lastProbe;
    this.lastProbe = { usable, invents, why: 'code' in root ? root.code : 'an empty answer' };
    if (invents && !before?.invents) {
      this.options.onWarning(`DNS at ${this.where} answers for names that do not exist: A-only domains are reported unknown`);
    }
    return this.lastProbe;
  }

  private get where(): string {
    return this.options.server ?? 'the system resolver';
  }

  /** `answersBefore`: the answers counted when the lookup began (none since: it is part of a run without answers) */
  private noteLookup(domain: string, outcome: DnsOutcome, answersBefore: number): void {
    const answered = outcome !== 'unanswered';
    if (this.recent.length < RECENT_LOOKUPS) this.recent.push(answered);
    else this.recent[this.recentAt] = answered;
    this.recentAt = (this.recentAt + 1) % RECENT_LOOKUPS;
    if (answered) {
      this.answers++;
      // not a domain that does not exist: a resolver may answer for any name under it from its cache (RFC 8020)
      if (outcome !== 'nxdomain') this.lastAnswered = domain;
      this.unansweredRun = 0;
      this.witness = undefined;
      this.witnessFailed = false;
      return;
    }
    this.lastUnanswered = domain;
    if (answersBefore === this.answers) this.unansweredRun++;
  }

  /** Lookups got no answer as an outage would have them (see WITNESS_AFTER). */
  private suspect(): boolean {
    return this.unansweredRun >= WITNESS_AFTER || this.failing() > 0;
  }

  /**
   * While lookups fail as an outage would have them (suspect()), asks about a
   * name under the domain that last answered — a fresh name, which no
   * resolver's cache can answer for it — once until an answer comes (or
   * UNANSWERED_TTL_MS has passed); resolves when that is told.
   */
  private witnessed(): Promise<unknown> {
    const domain = this.lastAnswered;
    if (domain === undefined || this.closed || !this.suspect()) return Promise.resolve();
    if (this.witness === undefined || this.clock.now() - this.witnessAt >= UNANSWERED_TTL_MS) this.witness = this.askWitness(domain);
    return this.witness;
  }

  private async askWitness(domain: string): Promise<boolean> {
    this.witnessAt = this.clock.now();
    const answers = this.answers;
    const nonce = Math.random().toString(36).slice(2, 10);
    const r = await this.ask(() => this.resolver.resolveMx(`mailsift-probe-${nonce}.${domain}`));
    const failed = 'code' in r && r.code !== dns.NOTFOUND && r.code !== dns.NODATA && r.code !== dns.CANCELLED;
    // an answer that came meanwhile has said it already
    if (answers === this.answers) this.witnessFailed = failed;
    return failed;
  }

  /** Of the last lookups, how many got no answer, when nearly all did (see RECENT_LOOKUPS); else 0. */
  private failing(): number {
    let unanswered = 0;
    for (const answered of this.recent) if (!answered) unanswered++;
    return unanswered >= MIN_UNANSWERED && unanswered >= UNUSABLE_SHARE * this.recent.length ? unanswered : 0;
  }

  /**
   * Whether DNS works, by the answers the run got: not when nearly all of the
   * last lookups got no answer, or those since the last answer got none, and
   * neither did the witness (see WITNESS_AFTER; without one, the first alone
   * decides); else when the probe passed, or a real MX
   * answer came since it began. Undefined before any probe ended. Ask after a
   * batch's lookups (each waits for the probe): says once when DNS is found
   * unusable, and once when it works again.
   */
  usable(): boolean | undefined {
    const probe = this.lastProbe;
    const failing = this.failing();
    const witness = this.lastAnswered;
    const outage = this.suspect() && (witness === undefined ? failing > 0 : this.witnessFailed);
    const usable = outage ? false : this.answeredMx || probe?.usable === true ? true : probe ? false : undefined;
    if (usable === false && this.judged !== false) {
      const noAnswer = failing > 0 ? `${failing} of the last ${this.recent.length}` : `the last ${this.unansweredRun}`;
      this.options.onWarning(
        !outage
          ? `DNS is unusable (${this.where} gave ${probe!.why} for the root zone and no MX answer): DNS-dependent statuses are unknown`
          : witness === undefined
            ? `DNS is unusable (${this.where} gave no answer to ${noAnswer} domains looked up: SERVFAIL or time-outs${probe?.usable ? ', though it answers for the root zone' : ''}): DNS-dependent statuses are unknown`
            : `DNS is unusable (${this.where} gave no answer to ${noAnswer} domains looked up, nor about ${witness}, which answered before: SERVFAIL or time-outs): DNS-dependent statuses are unknown`,
      );
    } else if (usable === true && this.judged === false) this.options.onWarning(`DNS at ${this.where} works again`);
    if (usable !== undefined) this.judged = usable;
    return usable;
  }

  /**
   * While DNS is judged unusable, asks it again, at most every
   * UNANSWERED_TTL_MS: the witness (see WITNESS_AFTER), or without one the
   * domain that last got no answer (past the cache), or the probe; before
   * anything was asked, the probe. A server that says it is
   * not ready gets no traffic, hence no lookups of its own that would show DNS
   * back: its readiness probe calls this.
   */
  retest(): void {
    if (this.closed) return;
    // nothing asked yet (a server just started): the probe tells at once whether there is DNS at all
    if (this.lastProbe === undefined) {
      void this.runProbe();
      return;
    }
    if (this.judged !== false || this.clock.now() < this.nextRetest) return;
    this.nextRetest = this.clock.now() + UNANSWERED_TTL_MS;
    if (this.lastAnswered !== undefined && this.witnessFailed) {
      this.witness = this.askWitness(this.lastAnswered);
      return;
    }
    const domain = this.lastUnanswered;
    if (domain === undefined) {
      void this.runProbe();
      return;
    }
    this.cache.delete(domain);
    void this.answer(domain);
  }

  /**
   * One question, answered within `timeoutMs` (our own timer). When c-ares
   * gives up on it sooner (its adaptive timeout, see above), it has measured
   * a server faster than this one is now: the resolver is replaced by a new
   * one, which has measured nothing and so waits for our timeout, and the
   * question is asked again on it for the time left. Questions already sent
   * on the old resolver finish there.
   */
  private ask<T>(query: (resolver: dns.Resolver) => Promise<T>): Promise<Answer<T>> {
    this.queries++;
    // the resolver's own time-outs are real time: what is left of ours is measured so too
    const took = stopwatch();
    return new Promise((resolve) => {
      let settled = false;
      let again = false;
      const settle = (answer: Answer<T>): void => {
        if (settled) return; // the late answer after our own time-out
        settled = true;
        cancel();
        // no such name, or no such record, is an answer; anything else is DNS failing (a cancel is our own close)
        if ('code' in answer && answer.code !== dns.NOTFOUND && answer.code !== dns.NODATA && answer.code !== dns.CANCELLED) {
          this.options.onFailure?.(answer.code);
        }
        resolve(answer);
      };
      const cancel = this.clock.setTimer(() => settle({ code: dns.TIMEOUT }), this.options.timeoutMs);
      const run = (resolver: dns.Resolver): void => {
        this.inFlight.set(resolver, (this.inFlight.get(resolver) ?? 0) + 1);
        const done = (): void => {
          const left = this.inFlight.get(resolver)! - 1;
          // a replaced resolver is let go of once its last question is through
          if (left > 0 || resolver === this.resolver) this.inFlight.set(resolver, left);
          else this.inFlight.delete(resolver);
        };
        query(resolver).then(
          (ok) => {
            done();
            settle({ ok });
          },
          (err: NodeJS.ErrnoException) => {
            done();
            const left = this.options.timeoutMs - took();
            if (err.code === dns.TIMEOUT && !again && !settled && !this.closed && left >= MIN_ASK_AGAIN_MS) {
              again = true;
              this.queries++;
              if (resolver === this.resolver) this.resolver = this.newResolver(this.options.timeoutMs);
              run(this.resolver);
              return;
            }
            settle({ code: err.code ?? 'EUNKNOWN' });
          },
        );
      };
      run(this.resolver);
    });
  }
}
