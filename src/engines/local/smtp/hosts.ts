import { waitInLine } from '../../../delay.js';

/**
 * What the checker has learnt of each MX host, kept apart from the dialogue:
 * failures are counted per host (a dead host is skipped for the next MX, and
 * for the other domains it serves), never per run; a host that says it has
 * too many of our connections gets one session at a time after a pause; and
 * each host has a time budget, so that a tarpit costs a bounded time.
 */

/** a host that refused or never answered is not dialled again for this long */
const DOWN_MS = 5 * 60_000;
/** after "too many connections": first pause, doubled each time, up to the cap */
const BUSY_PAUSE_MS = 2_000;
const BUSY_PAUSE_MAX_MS = 60_000;
/** a host stays at one session this long after its last "too many connections" */
const NARROW_MS = 5 * 60_000;
/** forget hosts not used for this long (serve runs for months) */
const FORGET_MS = 30 * 60_000;
const MAX_HOSTS = 50_000;

export interface HostOptions {
  /** the most time spent on one host (sessions open to it, in wall time) */
  budgetMs: number;
  /** the budget is renewed after this long (serve); absent: once per run (the CLI) */
  budgetWindowMs?: number;
  now?: () => number;
}

class Host {
  /** wall time with at least one session open, within the budget window */
  busyMs = 0;
  open = 0;
  busySince = 0;
  windowStart: number;
  downUntil = 0;
  /** why it is down, for the rows that skip it */
  downWhy: 'refused' | 'timeout' | 'protocol' = 'refused';
  narrowUntil = 0;
  pauseUntil = 0;
  pauseMs = BUSY_PAUSE_MS;
  lastUsed: number;
  /** sessions of ours that hold the host's gate, and those waiting for it */
  holding = 0;
  waiting: (() => void)[] = [];
  constructor(now: number) {
    this.windowStart = now;
    this.lastUsed = now;
  }
}

export class HostHealth {
  private readonly hosts = new Map<string, Host>();
  private readonly now: () => number;

  constructor(private readonly o: HostOptions) {
    this.now = o.now ?? Date.now;
  }

  private get(host: string): Host {
    const now = this.now();
    let h = this.hosts.get(host);
    if (!h) {
      if (this.hosts.size >= MAX_HOSTS) this.sweep(now);
      this.hosts.set(host, (h = new Host(now)));
    }
    h.lastUsed = now;
    if (this.o.budgetWindowMs !== undefined && now - h.windowStart >= this.o.budgetWindowMs) {
      h.windowStart = now;
      h.busyMs = 0;
      if (h.open > 0) h.busySince = now;
    }
    return h;
  }

  private sweep(now: number): void {
    for (const [name, h] of this.hosts) if (h.open === 0 && now - h.lastUsed > FORGET_MS) this.hosts.delete(name);
    if (this.hosts.size >= MAX_HOSTS) this.hosts.delete(this.hosts.keys().next().value!);
  }

  /** Why not to dial this host now, if there is a reason: down (and why), or its budget spent. */
  skip(host: string): 'refused' | 'timeout' | 'protocol' | 'spent' | undefined {
    const h = this.get(host);
    if (h.downUntil > this.now()) return h.downWhy;
    return this.remaining(host) <= 0 ? 'spent' : undefined;
  }

  /** ms of the host's budget left */
  remaining(host: string): number {
    const h = this.get(host);
    const busy = h.busyMs + (h.open > 0 ? this.now() - h.busySince : 0);
    return this.o.budgetMs - busy;
  }

  /** A session to the host starts (dialling included); returns the epoch ms its budget ends at. */
  begin(host: string): number {
    const h = this.get(host);
    const now = this.now();
    if (h.open++ === 0) h.busySince = now;
    return now + this.remaining(host);
  }

  end(host: string): void {
    const h = this.get(host);
    if (--h.open === 0) h.busyMs += this.now() - h.busySince;
  }

  /** The host would not talk (refused, never answered, broke the protocol): skipped for a while. */
  down(host: string, why: 'refused' | 'timeout' | 'protocol'): void {
    const h = this.get(host);
    h.downUntil = this.now() + DOWN_MS;
    h.downWhy = why;
  }

  /** "Too many connections": one session at a time from now on, after a pause that grows if it happens again. */
  busy(host: string): void {
    const h = this.get(host);
    const now = this.now();
    h.pauseUntil = now + h.pauseMs;
    h.pauseMs = Math.min(BUSY_PAUSE_MAX_MS, h.pauseMs * 2);
    h.narrowUntil = now + NARROW_MS;
  }

  /** A session went through: the pause starts small again next time. */
  fine(host: string): void {
    this.get(host).pauseMs = BUSY_PAUSE_MS;
  }

  /** whether the host is held to one session at a time */
  narrowed(host: string): boolean {
    return this.get(host).narrowUntil > this.now();
  }

  /**
   * Waits until a session of ours may open to the host: always at once,
   * except for a narrowed host, which gets one at a time — counting the
   * sessions that were already open when it said "too many connections".
   * Rejects when `signal` aborts. Call leave() when the session is over.
   */
  async enter(host: string, signal?: AbortSignal): Promise<void> {
    const h = this.get(host);
    const take = (): true | undefined => {
      if (h.holding > 0 && this.narrowed(host)) return undefined;
      h.holding++;
      return true;
    };
    await waitInLine(h.waiting, take, signal);
  }

  leave(host: string): void {
    const h = this.get(host);
    h.holding--;
    // each waiter checks again; those that still may not go put themselves back
    for (const go of h.waiting.splice(0)) go();
  }

  /** ms to wait before dialling the host again (a busy host's pause) */
  pause(host: string): number {
    return Math.max(0, this.get(host).pauseUntil - this.now());
  }
}
