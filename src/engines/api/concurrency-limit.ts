/**
 * How many requests may be in flight at once: pinned (`--concurrency 8`) or
 * adaptive (`--concurrency auto`, the default). Pure: it is told of dispatches
 * and answers, and never reads a clock or touches the network, so that it is
 * tested against a simulated server (test/engines/api/concurrency-limit.test.ts).
 *
 * The adaptive limit works in rounds, as TCP does: a round ends when a request
 * sent during it comes back, so that a round is one round trip whatever the
 * latency. At the end of each round it looks at what the round taught:
 *
 * - Little's law, the way TCP Vegas and Netflix's concurrency-limits read it:
 *   with `load` in flight, answers taking `rtt` (the round's median) where the server alone takes
 *   `minRtt`, about `queued = load × (1 − minRtt / rtt)` requests wait in a
 *   queue at the server, and `load − queued` is what it sustains without one.
 * - Slow start: from 1 in flight (the first request probes), the limit doubles
 *   each round while less than one request waits (the way HyStart ends TCP's
 *   slow start on delay, before any loss), and until a refusal. Doubling, not
 *   +1: against a server 400 ms away, +1 per round takes 6 s to reach 16.
 * - Then: fewer than alpha waiting (3·log10 load, at least 2) → the limit
 *   becomes what the server sustains plus alpha (Netflix's Gradient2 adds a
 *   queue allowance the same way), a few more per round. More than beta
 *   (6·log10 load, at least 4) → what the server sustains plus alpha: a
 *   multiplicative decrease as deep as the queue is long, never less than the
 *   0.9 Vector's adaptive request concurrency takes off per round. In between,
 *   it holds.
 * - A refusal (503, 429) or a request lost (timeout, reset connection) in the
 *   round: × 0.9 (Vector's decrease ratio), × 0.5 when nothing in the round
 *   got through at all.
 * - A server at capacity refuses the requests past it: when those refused are
 *   the ones sent with the most in flight, the number below them is the
 *   server's ceiling. The limit stays under it and tries one more only after
 *   PROBE_EVERY rounds without a refusal, doubled by each refusal. Simulated
 *   (test/engines/api/concurrency-limit.test.ts, 200 requests of 200 ms): a
 *   server serving 6 and queueing 6 more, 2.0% refused at 1.06× its capacity's
 *   time; serving 10 and queueing 2, 2.0% at 1.15× (before: 4.8% at 1.45×, the
 *   limit growing back over 12 round after round).
 * - It only grows when the limit was reached in the round: a limit that is
 *   not what holds the requests back (a paced plan, a slow input) has not been
 *   tested, and must not creep up unchecked (Vector does the same).
 *
 * The minimum round trip follows the server slowly upwards (it moves 1/50 of
 * the way to each round's fastest answer), so a server that becomes slower for
 * good is not read as a queue for ever, while a queue that lasts a few rounds
 * still is.
 */

/** the most requests in flight, adaptive or pinned */
export const MAX_IN_FLIGHT = 64;

/** `--concurrency`: a number pins the limit; 'auto' lets it follow the server */
export type ConcurrencySetting = number | 'auto';

/** What one answered (or failed) request taught. */
export interface Sample {
  /** sent to answered; undefined when no answer came (timeout, reset) */
  rttMs?: number;
  /** the server pushed back: a 503/429 answer, a timeout or a lost connection */
  overload: boolean;
}

export interface LimitChange {
  from: number;
  to: number;
  /** why, in words for --verbose: "answers steady at 210 ms (fastest 200 ms)" */
  reason: string;
}

export interface ConcurrencyLimit {
  readonly mode: 'auto' | 'fixed';
  /** requests allowed in flight now, 1..MAX_IN_FLIGHT */
  readonly limit: number;
  /** the smoothed round trip of recent answers, once one has been seen */
  readonly rttMs: number | undefined;
  /** false once the server has pushed back or queued, until it is healthy again */
  readonly healthy: boolean;
  /** a request leaves with `inFlight` (itself included) in flight; returns its ticket for `answered` */
  dispatched(inFlight: number): number;
  /** that request ended; returns the change of limit it caused, if any */
  answered(ticket: number, sample: Sample): LimitChange | undefined;
}

export function concurrencyLimit(setting: ConcurrencySetting): ConcurrencyLimit {
  return setting === 'auto' ? new AdaptiveLimit() : new FixedLimit(setting);
}

export class FixedLimit implements ConcurrencyLimit {
  readonly mode = 'fixed';
  readonly healthy = true;
  readonly limit: number;
  rttMs: number | undefined;
  private ticket = 0;

  constructor(limit: number) {
    this.limit = Math.min(MAX_IN_FLIGHT, Math.max(1, Math.floor(limit)));
  }

  dispatched(): number {
    return this.ticket++;
  }

  answered(_ticket: number, sample: Sample): undefined {
    if (sample.rttMs !== undefined) this.rttMs = smooth(this.rttMs, sample.rttMs);
    return undefined;
  }
}

/** slow start ends once about this many requests wait at the server */
const SLOW_START_EXIT = 1;

/**
 * HyStart++ (RFC 9406 §4.3), its thresholds adapted to an API. From
 * N_RTT_SAMPLE in flight on, a rise in round-trip time ends slow start; the
 * rise must pass a fraction of the fastest answer (1/MIN_RTT_DIVISOR), and at
 * least MIN_RTT_THRESH_MS. RFC 9406 takes an eighth, capped at 16 ms: a router
 * queues packets, each adding a little. A server queues whole requests: the
 * first to wait waits a whole service time, and its round trip doubles. A
 * client on a loaded machine reads answers late too, by 50-150 ms on a 2-core
 * machine with a load of 10-15, which an eighth of 400 ms took for a queue
 * in every run of `npm run bench adaptive`'s roomy plan (slow start ended at 8,
 * 0.71 of a simple client's throughput against 0.84-0.88). Half the fastest
 * round trip tells the one from the other. Leaving slow start, the limit grows
 * for CSS_ROUNDS rounds by at most 1/CSS_GROWTH_DIVISOR a round (Conservative
 * Slow Start), back to doubling if the rise was spurious, then as below.
 */
const N_RTT_SAMPLE = 8;
const MIN_RTT_THRESH_MS = 4;
const MIN_RTT_DIVISOR = 2;
const CSS_GROWTH_DIVISOR = 4;
const CSS_ROUNDS = 5;
/** on a refusal or a lost request: Vector's decrease ratio */
const DECREASE = 0.9;
/** how far the minimum round trip moves towards a slower round's fastest answer */
const MIN_RTT_DRIFT = 1 / 50;

interface Round {
  /** tickets from here on were dispatched during this round */
  firstTicket: number;
  /** the round trips of the answers in the round */
  rtts: number[];
  /** an answer of the round came back late by HyStart++'s threshold (see AdaptiveLimit.late) */
  rose: boolean;
  answers: number;
  fastest: number;
  overloads: number;
  reachedLimit: boolean;
  /** the most in flight when a request left during the round */
  peakInFlight: number;
  /** the fewest in flight when a request refused in the round left (Infinity: none refused) */
  lowestRefusedAt: number;
  /** the most in flight when a request answered in the round left */
  highestAnsweredAt: number;
}

/** rounds at the ceiling without a refusal before it is tried one higher; doubled by each refusal */
const PROBE_EVERY = 4;
const PROBE_EVERY_MAX = 32;

export class AdaptiveLimit implements ConcurrencyLimit {
  readonly mode = 'auto';
  private value = 1;
  /** the most in flight the server took at once the last time it refused some: not passed again but by a probe */
  private ceiling = MAX_IN_FLIGHT;
  private probeEvery = PROBE_EVERY;
  /** rounds spent at the ceiling without a refusal */
  private atCeiling = 0;
  /** how many were in flight (itself included) when each request still out left */
  private readonly leftWith = new Map<number, number>();
  /** doubling; Conservative Slow Start (HyStart++) once the round trip rises; then Little's law */
  private phase: 'slow-start' | 'css' | 'avoidance' = 'slow-start';
  /** rounds spent in Conservative Slow Start */
  private cssRounds = 0;
  /**
   * Slow start's next doubling, decided at a round's end and granted once every
   * request sent before then has come back in time (tickets below `before`);
   * `reason` tells it. A late one among them ends slow start instead.
   */
  private growth: { before: number; reason: string } | undefined;
  private minRtt: number | undefined;
  private smoothed: number | undefined;
  private ticket = 0;
  private round: Round = newRound(0);
  /** the last round ended with a decrease */
  private pushedBack = false;

  get limit(): number {
    return Math.max(1, Math.min(MAX_IN_FLIGHT, Math.floor(this.value)));
  }

  get rttMs(): number | undefined {
    return this.smoothed;
  }

  get healthy(): boolean {
    return !this.pushedBack && this.round.overloads === 0;
  }

  dispatched(inFlight: number): number {
    if (inFlight >= this.limit) this.round.reachedLimit = true;
    this.round.peakInFlight = Math.max(this.round.peakInFlight, inFlight);
    this.leftWith.set(this.ticket, inFlight);
    return this.ticket++;
  }

  answered(ticket: number, sample: Sample): LimitChange | undefined {
    const r = this.round;
    const leftWith = this.leftWith.get(ticket);
    this.leftWith.delete(ticket);
    if (sample.overload) {
      r.overloads++;
      if (leftWith !== undefined) r.lowestRefusedAt = Math.min(r.lowestRefusedAt, leftWith);
    } else if (sample.rttMs !== undefined) {
      if (leftWith !== undefined) r.highestAnsweredAt = Math.max(r.highestAnsweredAt, leftWith);
      r.rtts.push(sample.rttMs);
      r.answers++;
      r.fastest = Math.min(r.fastest, sample.rttMs);
      this.smoothed = smooth(this.smoothed, sample.rttMs);
      if (this.late(sample.rttMs, leftWith)) r.rose = true;
    }
    const grown = this.growth && ticket < this.growth.before ? this.grow(r.rose) : undefined;
    if (ticket < r.firstTicket) return grown;
    const ended = this.endRound();
    return ended && grown ? { ...ended, from: grown.from } : (ended ?? grown);
  }

  /**
   * HyStart++'s test (RFC 9406 §4.3), adapted: the round trip rose by a set
   * fraction. A queue at a router delays every packet, and RFC 9406 watches
   * the fastest of a round. A queue at a server delays the requests that found
   * it full: those sent with the most in flight (the top quarter, judged once
   * N_RTT_SAMPLE are in flight); a busy client or a garbage collection delays
   * any answer, and only some, and is not taken for a queue.
   */
  private late(rttMs: number, leftWith: number | undefined): boolean {
    const minRtt = this.minRtt;
    if (minRtt === undefined || leftWith === undefined || this.value < N_RTT_SAMPLE) return false;
    return leftWith > (this.value * 3) / 4 && rttMs >= minRtt + Math.max(MIN_RTT_THRESH_MS, minRtt / MIN_RTT_DIVISOR);
  }

  /**
   * The pending doubling, once the requests it waits for are back: granted if
   * none came back late; a late one was queued at the server, and slow start
   * ends before the doubling takes the limit past what the server takes.
   */
  private grow(rose: boolean): LimitChange | undefined {
    const growth = this.growth!;
    if (!rose) {
      for (const ticket of this.leftWith.keys()) if (ticket < growth.before) return undefined;
    }
    this.growth = undefined;
    if (rose || this.phase !== 'slow-start') {
      if (this.phase === 'slow-start') this.enterCss();
      return undefined;
    }
    const from = this.limit;
    this.value = Math.min(MAX_IN_FLIGHT, this.value * 2);
    return this.limit === from ? undefined : { from, to: this.limit, reason: growth.reason };
  }

  private enterCss(): void {
    this.phase = 'css';
    this.cssRounds = 0;
  }

  private endRound(): LimitChange | undefined {
    const r = this.round;
    this.round = newRound(this.ticket);
    const from = this.limit;
    let reason = '';
    // the median: a queue at the server delays every answer, a busy client or a
    // garbage collection only some; the median sees the first and not the second
    const rtt = r.answers > 0 ? median(r.rtts) : undefined;
    if (rtt !== undefined) {
      this.minRtt = this.minRtt === undefined || r.fastest < this.minRtt ? r.fastest : this.minRtt + (r.fastest - this.minRtt) * MIN_RTT_DRIFT;
    }
    const minRtt = this.minRtt;
    this.pushedBack = false;

    if (r.overloads > 0) {
      this.phase = 'avoidance';
      this.growth = undefined;
      this.pushedBack = true;
      // A server at capacity refuses what comes past it: what it took at once is
      // its ceiling. Backing off by 0.9 alone went back over it round after round
      // (5.7% of requests refused, each a retry and a wait, against a server that
      // refuses past 12 in flight).
      // Refusals with answers above them, or far below the limit, are faults or an
      // outage, not the capacity (slow start overshoots it at most twofold).
      const took = r.lowestRefusedAt - 1;
      if (took < Infinity && r.highestAnsweredAt <= took && took >= this.value / 4) {
        // below it already: refusals of requests sent before the last cut, answered for
        if (this.value > took) {
          this.ceiling = Math.max(1, Math.min(this.ceiling, took));
          this.probeEvery = Math.min(PROBE_EVERY_MAX, this.probeEvery * 2);
          this.atCeiling = 0;
          this.value = Math.max(1, Math.min(this.value * DECREASE, this.ceiling));
        }
      } else this.value = Math.max(1, this.value * (r.answers === 0 ? 0.5 : DECREASE));
      reason = `the server pushed back (${r.overloads} of ${r.overloads + r.answers} ${r.overloads + r.answers === 1 ? 'request' : 'requests'} refused or lost)`;
    } else if (rtt !== undefined && minRtt !== undefined) {
      const latency = `answers at ${ms(rtt)} (fastest ${ms(minRtt)})`;
      // what was in flight, which a binding plan may have taken past the limit, or a slow input kept below it
      const load = r.peakInFlight > 0 ? r.peakInFlight : this.value;
      const queued = load * (1 - minRtt / rtt);
      const sustained = load - queued;
      const log = Math.log10(Math.max(2, load));
      const alpha = Math.max(2, 3 * log);
      const beta = Math.max(4, 6 * log);
      if (this.phase === 'slow-start' && (r.rose || queued >= SLOW_START_EXIT)) {
        this.growth = undefined;
        this.enterCss();
      } else if (this.phase === 'css') {
        // the limit reached and nothing late: the rise was spurious (a busy moment, not a queue), back to doubling
        if (!r.rose && r.reachedLimit && r.answers >= N_RTT_SAMPLE && queued < SLOW_START_EXIT) this.phase = 'slow-start';
        else if (++this.cssRounds >= CSS_ROUNDS) this.phase = 'avoidance';
      }
      // growth while in Conservative Slow Start: a quarter of doubling, at most
      const most = this.phase === 'css' ? this.value * (1 + 1 / CSS_GROWTH_DIVISOR) : MAX_IN_FLIGHT;
      if (this.phase === 'slow-start') {
        // doubled once the requests out now are back in time (grow); under N_RTT_SAMPLE at once, at the round's end
        if (r.reachedLimit && !this.growth) {
          this.growth = { before: this.value >= N_RTT_SAMPLE ? this.ticket : 0, reason: `${latency}: no queue yet, doubling` };
          const grown = this.grow(false);
          if (grown) reason = grown.reason;
        }
      } else if (queued > beta) {
        this.pushedBack = true;
        this.value = Math.max(1, Math.min(this.value * DECREASE, sustained + alpha));
        reason = `${latency}: about ${Math.round(queued)} waiting at the server`;
      } else if (queued < alpha && r.reachedLimit) {
        this.value = Math.min(MAX_IN_FLIGHT, most, Math.max(this.value + 1 / this.value, sustained + alpha));
        reason = `${latency}: steady`;
      }
    }
    if (r.overloads === 0 && this.value >= this.ceiling) {
      // held at the ceiling; now and then one more, in case the server has more room now
      this.value = this.ceiling;
      if (r.reachedLimit && ++this.atCeiling >= this.probeEvery) {
        this.atCeiling = 0;
        this.ceiling = Math.min(MAX_IN_FLIGHT, this.ceiling + 1);
        this.value = this.ceiling;
        reason = `no refusal for ${this.probeEvery} rounds: trying one more`;
      }
    }
    // the value keeps its fraction: small steps add up even when the whole number does not move yet
    const to = this.limit;
    return to === from ? undefined : { from, to, reason };
  }
}

function newRound(firstTicket: number): Round {
  return {
    firstTicket,
    rtts: [],
    rose: false,
    answers: 0,
    fastest: Infinity,
    overloads: 0,
    reachedLimit: false,
    peakInFlight: 0,
    lowestRefusedAt: Infinity,
    highestAnsweredAt: 0,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** an EWMA with Vector's weight of 0.4 for the newest sample */
function smooth(previous: number | undefined, sample: number): number {
  return previous === undefined ? sample : previous + (sample - previous) * 0.4;
}

function ms(value: number): string {
  return value >= 10_000 ? `${(value / 1000).toFixed(0)} s` : value >= 1000 ? `${(value / 1000).toFixed(1)} s` : `${Math.round(value)} ms`;
}
