import { waitInLine } from '../../../delay.js';

/**
 * What the checker has learnt of each mail server, kept apart from the
 * dialogue. A server is an address (IP), whatever names point at it: an MX, a
 * CNAME and a `mail.` name of one machine are one server, with one health and
 * one budget (through a socks5h proxy, which resolves the names itself, the
 * name stands for it). Failures are counted per server (a dead one is skipped
 * for the host's next address or the next MX, and for the other domains it
 * serves), never per run; a server that says it has too many of our
 * connections gets one session at a time after a pause; one that dropped a
 * session after some recipients gets sessions that stop short of that point;
 * one that refused our reverse path is asked with `<>` from the start, and one
 * whose TLS handshake failed in plain text (its habits: each later session
 * skips the dance that failed); and each server has a time budget, so that a
 * tarpit costs a bounded time.
 */

/** a server that refused or never answered is not dialled again for this long */
const DOWN_MS = 5 * 60_000;
/** after "too many connections": first pause, doubled each time, up to the cap */
const BUSY_PAUSE_MS = 2_000;
const BUSY_PAUSE_MAX_MS = 60_000;
/** a server stays at one session this long after its last "too many connections" */
const NARROW_MS = 5 * 60_000;
/** forget servers not used for this long (serve runs for months) */
const FORGET_MS = 30 * 60_000;
const MAX_SERVERS = 50_000;

/** What a server has taught the dialogue, for its later sessions (see DialogueOptions). */
export interface Habits {
  /** failed recipients a session may have before the server drops it, or starts to hold its replies */
  failedPerSession?: number;
  /** it refused our reverse path: `<>` from the start */
  nullSender?: true;
  /** its TLS handshake failed: no STARTTLS */
  plainText?: true;
}

export interface HostOptions {
  /** the most time spent on one server (sessions open to it, in wall time) */
  budgetMs: number;
  /** the budget is renewed after this long (serve); absent: once per run (the CLI) */
  budgetWindowMs?: number;
  now?: () => number;
}

class Server {
  /** wall time with at least one session open, within the budget window */
  busyMs = 0;
  open = 0;
  busySince = 0;
  windowStart: number;
  downUntil = 0;
  /** why it is down, for the rows that skip it */
  downWhy: 'refused' | 'timeout' | 'protocol' = 'refused';
  narrowUntil = 0;
  /** what its sessions taught (failedPerSession once it dropped one) */
  habits: Habits = {};
  pauseUntil = 0;
  pauseMs = BUSY_PAUSE_MS;
  lastUsed: number;
  /** sessions of ours that hold the server's gate, and those waiting for it */
  holding = 0;
  waiting: (() => void)[] = [];
  constructor(now: number) {
    this.windowStart = now;
    this.lastUsed = now;
  }
}

export class HostHealth {
  private readonly servers = new Map<string, Server>();
  private readonly now: () => number;

  constructor(private readonly o: HostOptions) {
    this.now = o.now ?? Date.now;
  }

  private get(server: string): Server {
    const now = this.now();
    let h = this.servers.get(server);
    if (!h) {
      if (this.servers.size >= MAX_SERVERS) this.sweep(now);
      this.servers.set(server, (h = new Server(now)));
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
    for (const [key, h] of this.servers) if (h.open === 0 && now - h.lastUsed > FORGET_MS) this.servers.delete(key);
    if (this.servers.size >= MAX_SERVERS) this.servers.delete(this.servers.keys().next().value!);
  }

  /** Why not to dial this server now, if there is a reason: down (and why), or its budget spent. */
  skip(server: string): 'refused' | 'timeout' | 'protocol' | 'spent' | undefined {
    const h = this.get(server);
    if (h.downUntil > this.now()) return h.downWhy;
    return this.remaining(server) <= 0 ? 'spent' : undefined;
  }

  /** ms of the server's budget left */
  remaining(server: string): number {
    const h = this.get(server);
    const busy = h.busyMs + (h.open > 0 ? this.now() - h.busySince : 0);
    return this.o.budgetMs - busy;
  }

  /** A session to the server starts (dialling included); returns the epoch ms its budget ends at. */
  begin(server: string): number {
    const h = this.get(server);
    const now = this.now();
    if (h.open++ === 0) h.busySince = now;
    return now + this.remaining(server);
  }

  end(server: string): void {
    const h = this.get(server);
    if (--h.open === 0) h.busyMs += this.now() - h.busySince;
  }

  /** The server would not talk (refused, never answered, broke the protocol): skipped for a while. */
  down(server: string, why: 'refused' | 'timeout' | 'protocol'): void {
    const h = this.get(server);
    h.downUntil = this.now() + DOWN_MS;
    h.downWhy = why;
  }

  /** "Too many connections": one session at a time from now on, after a pause that grows if it happens again. */
  busy(server: string): void {
    const h = this.get(server);
    const now = this.now();
    h.pauseUntil = now + h.pauseMs;
    h.pauseMs = Math.min(BUSY_PAUSE_MAX_MS, h.pauseMs * 2);
    h.narrowUntil = now + NARROW_MS;
  }

  /**
   * The server dropped a session after `failed` failed recipients (the drop's
   * own reply included): later sessions stop one short of that. Anti-harvest
   * limits count failed recipients per connection — Postfix's
   * smtpd_hard_error_limit closes at its Nth error, Exim's ACLs at the RCPT
   * after N failed ones —, so the drop came at the `failed`th. A drop with
   * fewer than two is not taken for such a limit (a connection lost once
   * would otherwise shrink every later session): the new session simply goes
   * on. Only ever lowered; kept for as long as the server is known.
   */
  dropped(server: string, failed: number): void {
    if (failed < 2) return;
    const h = this.get(server);
    h.habits.failedPerSession = Math.min(h.habits.failedPerSession ?? Infinity, failed - 1);
  }

  /**
   * The server began to hold its replies once `failed` recipients of a
   * session had failed (Postfix's smtpd_soft_error_limit: once 10 errors are
   * counted, every reply, QUIT's too, waits smtpd_error_sleep_time, 1 s):
   * later sessions stop one short of that and go on in a new one, whose
   * counters start again. As with a drop, fewer than two is not taken for
   * such a limit. Only ever lowered.
   */
  slowed(server: string, failed: number): void {
    this.dropped(server, failed);
  }

  /**
   * What a session learnt of the server's ways (it refused our reverse path;
   * its TLS handshake failed), kept for as long as the server is known: later
   * sessions start where this one ended up instead of failing the same way.
   */
  learn(server: string, learnt: Omit<Habits, 'failedPerSession'>): void {
    Object.assign(this.get(server).habits, learnt);
  }

  /** what the server's sessions so far have taught the next one */
  habits(server: string): Habits {
    return { ...this.get(server).habits };
  }

  /** A session went through: the pause starts small again next time. */
  fine(server: string): void {
    this.get(server).pauseMs = BUSY_PAUSE_MS;
  }

  /** whether the server is held to one session at a time */
  narrowed(server: string): boolean {
    return this.get(server).narrowUntil > this.now();
  }

  /**
   * Waits until a session of ours may open to the server: always at once,
   * except for a narrowed server, which gets one at a time — counting the
   * sessions that were already open when it said "too many connections".
   * Rejects when `signal` aborts. Call leave() when the session is over.
   */
  async enter(server: string, signal?: AbortSignal): Promise<void> {
    const h = this.get(server);
    const take = (): true | undefined => {
      if (h.holding > 0 && this.narrowed(server)) return undefined;
      h.holding++;
      return true;
    };
    await waitInLine(h.waiting, take, signal);
  }

  leave(server: string): void {
    const h = this.get(server);
    h.holding--;
    // each waiter checks again; those that still may not go put themselves back
    for (const go of h.waiting.splice(0)) go();
  }

  /** ms to wait before dialling the server again (a busy server's pause) */
  pause(server: string): number {
    return Math.max(0, this.get(server).pauseUntil - this.now());
  }
}
