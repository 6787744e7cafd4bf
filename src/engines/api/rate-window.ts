import { MAX_IN_FLIGHT } from './concurrency-limit.js';
import type { RateLimitInfo, RateLimitPolicy } from './rate-limit-headers.js';

/**
 * The rate-limit windows as the server's headers describe them: how many
 * requests may still leave before each reset, and when that is. Pure: every
 * call is told the time and how many requests are in flight, so it is tested on
 * a fake clock (test/engines/api/rate-window.test.ts) apart from the queue that
 * waits on it (governor.ts).
 *
 * A server may apply several limits at once (a quota behind a per-second
 * limit, a generous X- header beside a strict IETF one): each policy the
 * headers name has a window of its own, and a request leaves only when every
 * one allows it. So the strictest wins, whatever its format and whichever
 * header comes first.
 *
 * In each window:
 * - Never more dispatches than Remaining allows: requests in flight count
 *   against it until an answer shows the server counted them. A negative
 *   Remaining arrives here as 0 (rate-limit-headers.ts).
 * - When Remaining is no number the server still gave a Limit and a reset:
 *   our own dispatches are counted against the Limit.
 * - A Limit that changes is taken at its smallest over this window and the one
 *   before, until a whole window's answers say otherwise; a Remaining above it
 *   is held to it.
 * - A window ends at its reset (plus a margin, so a request never lands a hair
 *   early); the next one opens with the Limit, less what is still in flight.
 *   A Limit of 0 opens it to one request: a probe, as the run's first request
 *   is one. Taken at its word, a Limit of 0 on answers that carry verdicts
 *   would stop the run until each batch's wait runs out.
 * - A Remaining whose reset cannot be placed in time (a reset before the
 *   request even left) still counts: when it runs out, one request asks again
 *   after a wait (the window's length, once known), and its answer opens the rest.
 * - A 429 closes it until Retry-After, else its reset, else a backoff that
 *   doubles per 429 in a row.
 */
export interface WindowOptions {
  /** dispatch this long after a reset, so a request never arrives a hair early */
  resetMarginMs: number;
  /** when the server says "none left" without saying when that ends: first wait */
  unknownResetMs: number;
}

/** How a request ended, as far as the windows are concerned. */
export interface WindowOutcome {
  info?: RateLimitInfo;
  /** an HTTP response arrived */
  answered?: boolean;
  /** the response was a 429 */
  rateLimited?: boolean;
}

const MAX_UNKNOWN_RESET_MS = 60_000;
/** send times kept of the requests let through: a hidden limit's length is guessed from them up to this Limit */
const PASSED_KEPT = 1000;
/** the window of a server that refuses with a 429 and names no policy */
const UNNAMED = '';

/** Dispatch sequence numbers, shared by every policy's window. */
interface Sequence {
  next: number;
}

/** One policy's window. */
class PolicyWindow {
  /** the smallest Limit told in this window, and in the one before */
  private limitNow: number | undefined;
  private limitBefore: number | undefined;
  /** dispatches still allowed in this window; undefined while the policy sets no limit */
  private allowance: number | undefined;
  /** end of the current window, local epoch ms */
  private resetAt: number | undefined;
  /** false while resetAt is only a time to ask again, not one the server told */
  private resetTold = true;
  /** the lowest Remaining seen in this window: the server's latest count */
  private lowestRemaining = Infinity;
  /** dispatches before this sequence number were in flight when lowestRemaining was read */
  private lowestSeq: number;
  /** dispatches since the window opened (the request that told of this policy, and those in flight, included) */
  private sentInWindow: number;
  /** when the first request since the window opened left */
  private openedAt: number | undefined;
  /** the longest window seen: a reset's distance from its request, a named `w`, a 429's wait */
  longestWindowMs = 0;
  /** asked again after a wait without a told reset and found none left, in a row */
  private emptyAsks = 0;
  /** the one request let out after such a wait has not been answered yet */
  private asking = false;
  /** dispatches from this sequence number on left after that wait */
  private askedFrom = 0;
  /** when the window last opened at a reset the server told (or we placed from what it told) */
  private rolledAt: number | undefined;
  /**
   * A 429 for a request sent after such an opening: the server counts its
   * seconds from when it answers, not from when the request arrived. Resets in
   * seconds are placed from the answer from then on.
   */
  private fromAnswer = false;

  /** dispatches from this sequence number on were counted here (the policy was told of later than some) */
  private readonly firstSeq: number;

  constructor(
    private readonly options: WindowOptions,
    private readonly seq: Sequence,
    inFlight: number,
  ) {
    this.lowestSeq = seq.next;
    this.firstSeq = seq.next;
    this.sentInWindow = inFlight + 1;
  }

  /** the Limit in force: the smallest told lately */
  get limit(): number | undefined {
    if (this.limitNow === undefined) return this.limitBefore;
    return this.limitBefore === undefined ? this.limitNow : Math.min(this.limitNow, this.limitBefore);
  }

  sent(now: number): void {
    if (this.allowance !== undefined) this.allowance--;
    this.sentInWindow++;
    this.openedAt ??= now;
  }

  unsent(seq: number): void {
    if (seq < this.firstSeq) return;
    if (this.allowance !== undefined) this.allowance++;
    this.sentInWindow--;
  }

  /** What an answer told of this policy (undefined: nothing, the answer was about others). */
  observe(seq: number, p: RateLimitPolicy | undefined, outcome: WindowOutcome, now: number, inFlight: number, sentAt: number): void {
    if (this.resetAt !== undefined && now >= this.resetAt + this.options.resetMarginMs) this.roll(inFlight, now);
    if (p === undefined) {
      // The request that asked again was let through, though its answer no longer names this
      // policy (merged with another, or a header the server stopped sending): a window still
      // shut would have refused it, so it has turned. Kept shut, each wait would double.
      if (this.asking && seq >= this.askedFrom && outcome.answered && !outcome.rateLimited) {
        this.asking = false;
        this.emptyAsks = 0;
        this.open(inFlight + 1);
        if (this.allowance !== undefined) this.allowance = Math.max(0, (this.limit ?? 1) - this.sentInWindow);
      }
      return;
    }
    if (p.limit !== undefined) this.limitNow = Math.min(this.limitNow ?? Infinity, p.limit);
    if (p.windowMs !== undefined) this.longestWindowMs = Math.max(this.longestWindowMs, p.windowMs);
    const resetAt = this.fromAnswer ? (p.resetLatestAt ?? p.resetAt) : p.resetAt;
    if (resetAt !== undefined) this.longestWindowMs = Math.max(this.longestWindowMs, resetAt - sentAt);

    // the window this answer counted in ended while it was on its way: its Remaining is of the last one
    const stale = resetAt !== undefined && resetAt <= now;
    if (resetAt !== undefined && !stale) {
      if (this.resetAt === undefined || !this.resetTold) {
        this.resetAt = resetAt;
        this.resetTold = true;
      } else if (resetAt >= this.resetAt + 1000) {
        // Estimates of one window's reset differ by less than a second (delta-seconds are
        // rounded up); a second or more later is the next window, even when its answer comes
        // before our own roll: a request that reached the server after the reset (a loaded
        // machine) tells the next window's Remaining, and it was read as this one's (a 429).
        this.open(inFlight + 1);
        this.resetAt = resetAt;
        if (this.allowance !== undefined) this.allowance = Math.max(0, (this.limit ?? 1) - this.sentInWindow);
      } else {
        // delta-seconds resets are rounded up: the earliest estimate is the closest
        this.resetAt = Math.min(this.resetAt, resetAt);
      }
    }
    const limit = this.limit;
    if (p.remaining !== undefined && stale) {
      // what the new window allows is its Limit (or, unknown, no more than the old one had left)
      this.allowance = Math.min(this.allowance ?? Infinity, (limit ?? p.remaining) - inFlight);
    } else if (p.remaining !== undefined) {
      if (this.asking) {
        // asked again after a wait the server named no end of: room now means its window has turned
        this.asking = false;
        if (p.remaining > 0) this.open(inFlight + 1);
      }
      if (p.remaining > 0) this.emptyAsks = 0;
      const remaining = Math.min(p.remaining, limit ?? Infinity);
      if (remaining < this.lowestRemaining) {
        // the server's latest count; assume everything else in flight is not in it yet
        this.lowestRemaining = remaining;
        this.allowance = remaining - inFlight;
        this.lowestSeq = this.seq.next;
      } else if (seq < this.lowestSeq && this.allowance !== undefined) {
        // it was counted before that reading after all: release its reservation
        this.allowance++;
      }
    } else if (outcome.answered && !outcome.rateLimited) {
      if (limit === undefined)
        this.allowance = undefined; // no visible limit
      else if (this.allowance === undefined && this.resetAt !== undefined) this.allowance = limit - this.sentInWindow;
    }
    // a window allows its Limit whatever its Remaining says, and this many were sent in it
    if (this.allowance !== undefined && limit !== undefined) this.allowance = Math.min(this.allowance, limit - this.sentInWindow);
  }

  /** A 429 for this policy (the request sent at `sentAt`): shut until `until` (Retry-After), else its reset, else `backoffMs`. Returns when it opens. */
  refused(now: number, sentAt: number, retryAt: number | undefined, backoffMs: number): number {
    if (this.rolledAt !== undefined && sentAt >= this.rolledAt) this.fromAnswer = true;
    this.allowance = Math.min(this.allowance ?? 0, 0);
    this.lowestRemaining = 0;
    this.lowestSeq = this.seq.next;
    let until = retryAt ?? this.resetAt ?? 0;
    if (until <= now) until = now + backoffMs;
    // the window the 429 counted in lasts at least from its first request to the time the server names
    if (this.openedAt !== undefined) this.longestWindowMs = Math.max(this.longestWindowMs, until - this.openedAt);
    this.resetAt = until;
    this.resetTold = true;
    this.asking = false;
    return until;
  }

  /**
   * When the next request may leave: `now`, a later time to wake at, or
   * undefined when only the answers in flight can tell (none left, no reset
   * known). With nothing in flight and no reset known, it sets a time to ask
   * again itself: no state of the window waits without a time to wake.
   */
  opensAt(now: number, inFlight: number): number | undefined {
    if (!this.exhausted()) return now;
    if (this.resetAt !== undefined && now >= this.resetAt + this.options.resetMarginMs) {
      this.roll(inFlight, now);
      if (!this.exhausted()) return now;
    }
    if (this.resetAt === undefined) {
      if (inFlight > 0) return undefined;
      // none left and no time told: wait (the window's length once known, doubling while it
      // proves too short), then one request asks again
      const wait = Math.min(MAX_UNKNOWN_RESET_MS, this.options.unknownResetMs * 2 ** Math.min(10, this.emptyAsks));
      this.resetAt = Math.max(now + wait, (this.openedAt ?? now) + this.longestWindowMs);
      this.resetTold = false;
    }
    return this.resetAt + this.options.resetMarginMs;
  }

  shutUntil(now: number): number | undefined {
    if (!this.exhausted() || this.resetAt === undefined) return undefined;
    const wake = this.resetAt + this.options.resetMarginMs;
    return wake > now ? wake : undefined;
  }

  /** Does this policy bind, answers taking `rtt`? (see RateWindow.bindingLimit) */
  binds(rtt: number): boolean {
    const limit = this.limit;
    if (limit === undefined || this.longestWindowMs === 0) return false;
    return limit < MAX_IN_FLIGHT * Math.max(1, this.longestWindowMs / rtt);
  }

  private exhausted(): boolean {
    return this.allowance !== undefined && this.allowance <= 0;
  }

  /** The window has passed: the server counts afresh. */
  private roll(inFlight: number, now: number): void {
    const told = this.resetTold;
    this.rolledAt = told ? now : undefined;
    // Requests still in flight may land in the new window: count them there. After a wait
    // the server named no end of, one request asks what the window holds now.
    const fresh = told ? Math.max(1, this.limit ?? 1) : 1;
    this.resetAt = undefined;
    this.resetTold = true;
    // a wait we chose says nothing of where the server's window began
    if (told) this.open(inFlight);
    else {
      this.emptyAsks++;
      this.asking = true;
      this.askedFrom = this.seq.next;
    }
    if (this.allowance !== undefined) this.allowance = Math.max(0, fresh - inFlight);
  }

  /** A new window of the server's: `counted` requests may already count in it. */
  private open(counted: number): void {
    this.lowestRemaining = Infinity;
    this.lowestSeq = this.seq.next;
    this.sentInWindow = counted;
    this.openedAt = undefined;
    this.limitBefore = this.limitNow ?? this.limitBefore;
    this.limitNow = undefined;
  }
}

export class RateWindow {
  private readonly policies = new Map<string, PolicyWindow>();
  private readonly seq: Sequence = { next: 0 };
  private consecutive429 = 0;
  /** after a 429 nobody leaves before this, whatever later answers say */
  private pausedUntil = 0;
  /** per policy, the Limit told by the last answer that let its request through */
  private readonly passedLimit = new Map<string, number>();
  /** when the requests the server let through left, the latest last */
  private readonly passedAt: number[] = [];

  constructor(private readonly options: WindowOptions) {}

  /** A request leaves: returns its sequence number, for `observe`. */
  sent(now: number): number {
    for (const w of this.policies.values()) w.sent(now);
    return this.seq.next++;
  }

  /** The slot of request `seq` was given back without sending anything. */
  unsent(seq: number): void {
    for (const w of this.policies.values()) w.unsent(seq);
  }

  /** What the answer to request `seq` (sent at `sentAt`) said; `inFlight` no longer counts it. */
  observe(seq: number, outcome: WindowOutcome, now: number, inFlight: number, sentAt = now): void {
    const told = this.behindTheSameHeaders(outcome.info?.policies ?? [], outcome, sentAt);
    for (const p of told) {
      if (this.policies.has(p.id)) continue;
      const w = new PolicyWindow(this.options, this.seq, inFlight);
      this.policies.set(p.id, w);
      // it let through at least its Limit of our requests before its reset: its window lasts that long
      if (outcome.rateLimited && p.limit !== undefined && p.limit > 0 && p.limit <= this.passedAt.length && p.resetAt !== undefined) {
        w.longestWindowMs = Math.max(0, p.resetAt - this.passedAt[this.passedAt.length - p.limit]!);
      }
    }
    // a 429 that no rate-limit header explains is a limit of its own, the server's unnamed one
    if (outcome.rateLimited && told.length === 0 && !this.policies.has(UNNAMED)) {
      this.policies.set(UNNAMED, new PolicyWindow(this.options, this.seq, inFlight));
    }
    for (const [id, w] of this.policies) {
      // the unnamed limit hears every answer as one that names no limit at all
      const p = id === UNNAMED ? { id } : told.find((t) => t.id === id);
      w.observe(seq, p, outcome, now, inFlight, sentAt);
    }

    if (outcome.rateLimited) {
      this.consecutive429++;
      const backoff = Math.min(MAX_UNKNOWN_RESET_MS, this.options.unknownResetMs * 2 ** Math.min(10, this.consecutive429 - 1));
      const ids = told.length > 0 ? told.map((p) => p.id) : [UNNAMED];
      for (const id of ids) {
        const until = this.policies.get(id)!.refused(now, sentAt, outcome.info?.retryAt, backoff);
        this.pausedUntil = Math.max(this.pausedUntil, until + this.options.resetMarginMs);
      }
    } else if (outcome.answered) {
      this.consecutive429 = 0;
    }
  }

  /**
   * Two limiters that write the same header names (express-rate-limit's
   * X-RateLimit-* from a per-minute and a per-second limiter, stacked): the
   * answers that pass tell the last one's, and only a 429 tells the other,
   * with its own Limit. Read as one policy whose Limit changes, the smaller
   * held and the other was found again, by a burst of 429s, in each of its
   * windows. A 429 whose Limit is not the one the passing answers of that
   * header tell is the other limiter: a policy of its own besides, which
   * counts our requests from then on, as the answers that pass never mention it.
   */
  private behindTheSameHeaders(told: RateLimitPolicy[], outcome: WindowOutcome, sentAt: number): RateLimitPolicy[] {
    if (!outcome.rateLimited) {
      if (!outcome.answered) return told;
      for (const p of told) if (p.limit !== undefined) this.passedLimit.set(p.id, p.limit);
      this.passedAt.push(sentAt);
      if (this.passedAt.length > PASSED_KEPT) this.passedAt.splice(0, this.passedAt.length - PASSED_KEPT);
      return told;
    }
    // the header's own policy hears the 429 as before: this only adds a limit
    const hidden = told.filter((p) => {
      const passed = this.passedLimit.get(p.id);
      return passed !== undefined && p.limit !== undefined && p.limit !== passed;
    });
    return [...told, ...hidden.map((p) => ({ ...p, id: `${p.id} (limit ${p.limit}, told by 429s)` }))];
  }

  /**
   * When the next request may leave: `now`, a later time to wake at, or
   * undefined when only the answers in flight can tell.
   */
  opensAt(now: number, inFlight: number): number | undefined {
    if (this.pausedUntil > now) return this.pausedUntil;
    let latest = now;
    let unknown = false;
    for (const w of this.policies.values()) {
      const at = w.opensAt(now, inFlight);
      if (at === undefined) unknown = true;
      else latest = Math.max(latest, at);
    }
    if (latest > now) return latest;
    return unknown ? undefined : now;
  }

  /** When dispatch resumes, while a window is shut; undefined while all are open. */
  shutUntil(now: number): number | undefined {
    if (this.pausedUntil > now) return this.pausedUntil;
    let latest: number | undefined;
    for (const w of this.policies.values()) {
      const at = w.shutUntil(now);
      if (at !== undefined) latest = Math.max(latest ?? at, at);
    }
    return latest;
  }

  /**
   * The Limit of the strictest policy that binds, if one does. A policy binds
   * when its window allows fewer requests than the most in flight could send
   * in it (answers taking `rttMs`): then the window and not the server is what
   * holds the run back. The window's length is not in every header: the
   * longest time to a reset seen so far stands for it.
   */
  bindingLimit(rttMs: number | undefined): number | undefined {
    const rtt = Math.max(1, rttMs ?? 1);
    let least: number | undefined;
    for (const w of this.policies.values()) {
      if (w.binds(rtt)) least = Math.min(least ?? Infinity, w.limit!);
    }
    return least;
  }
}
