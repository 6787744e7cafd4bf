import { waitInLine } from '../../../delay.js';

/**
 * The SMTP check's shared state, behind two small interfaces so that `serve
 * --redis` can share it between instances (so that N instances stay as gentle with a mail server as one). The engine never
 * knows which implementation it has; the in-memory ones below serve a CLI run
 * and a single `serve`.
 */

/** What the check learnt of one address (see checker.ts): 'disabled' is a refusal for a reason the server gave (disabled, moved). */
export type MailboxFinding = 'accepted' | 'refused' | 'disabled' | 'full';

export interface SmtpCache {
  /** whether the domain accepts any mailbox; undefined when not known */
  getCatchAll(domain: string): Promise<boolean | undefined>;
  setCatchAll(domain: string, catchAll: boolean, ttlMs: number): Promise<void>;
  /** the finding for an address (lower-case domain), undefined when not known */
  getMailbox(email: string): Promise<MailboxFinding | undefined>;
  setMailbox(email: string, finding: MailboxFinding, ttlMs: number): Promise<void>;
}

export interface SessionLease {
  release(): void;
}

/** Sessions open at once to one mail server (its address), shared by everything that dials it. */
export interface SessionBudget {
  /** resolves when a session to `server` (an address) may open; rejects only when `signal` aborts */
  acquire(server: string, signal?: AbortSignal): Promise<SessionLease>;
}

/** A map whose entries expire, bounded: past `max` entries the oldest goes first. */
class ExpiringMap<V> {
  private readonly map = new Map<string, { value: V; expires: number }>();
  constructor(
    private readonly max: number,
    private readonly now: () => number,
  ) {}
  get(key: string): V | undefined {
    const e = this.map.get(key);
    if (!e) return undefined;
    if (e.expires <= this.now()) {
      this.map.delete(key);
      return undefined;
    }
    return e.value;
  }
  set(key: string, value: V, ttlMs: number): void {
    this.map.delete(key);
    if (this.map.size >= this.max) this.map.delete(this.map.keys().next().value!);
    this.map.set(key, { value, expires: this.now() + ttlMs });
  }
}

export class MemorySmtpCache implements SmtpCache {
  private readonly catchAll: ExpiringMap<boolean>;
  private readonly mailbox: ExpiringMap<MailboxFinding>;
  constructor(options: { maxDomains?: number; maxMailboxes?: number; now?: () => number } = {}) {
    const now = options.now ?? Date.now;
    this.catchAll = new ExpiringMap(options.maxDomains ?? 100_000, now);
    this.mailbox = new ExpiringMap(options.maxMailboxes ?? 200_000, now);
  }
  async getCatchAll(domain: string) {
    return this.catchAll.get(domain);
  }
  async setCatchAll(domain: string, value: boolean, ttlMs: number) {
    this.catchAll.set(domain, value, ttlMs);
  }
  async getMailbox(email: string) {
    return this.mailbox.get(email);
  }
  async setMailbox(email: string, finding: MailboxFinding, ttlMs: number) {
    this.mailbox.set(email, finding, ttlMs);
  }
}

/** Counting semaphores, one per server address, made when first asked for and dropped when idle. */
export class MemorySessionBudget implements SessionBudget {
  private readonly hosts = new Map<string, { open: number; waiting: (() => void)[] }>();
  /** the most sessions ever open at once to one host: tests and the bench check it */
  maxOpen = 0;

  constructor(readonly perHost: number) {}

  acquire(host: string, signal?: AbortSignal): Promise<SessionLease> {
    let h = this.hosts.get(host);
    if (!h) this.hosts.set(host, (h = { open: 0, waiting: [] }));
    const state = h;
    const lease = (): SessionLease => {
      state.open++;
      this.maxOpen = Math.max(this.maxOpen, state.open);
      let released = false;
      return {
        release: () => {
          if (released) return;
          released = true;
          state.open--;
          const next = state.waiting.shift();
          if (next) next();
          else if (state.open === 0) this.hosts.delete(host);
        },
      };
    };
    return waitInLine(state.waiting, () => (state.open < this.perHost ? lease() : undefined), signal);
  }
}
