import { systemClock, type Clock } from '../../../time/clock.js';

/**
 * Whether outbound SMTP works at all from here. A network that blocks port
 * 25 (most clouds) makes every connection time out — to every host, of every
 * domain — and none ever opens. A dead or parked domain's MX looks different:
 * it refuses, or it is one host among others that answer. So the check is
 * judged blocked only on that evidence (timeouts, not refusals, to several
 * distinct hosts of distinct domains, and no connection ever opened), and
 * even then it is tried again later: a verdict about the network is never
 * kept for good.
 */

/** distinct hosts, of as many distinct domains, that must time out before we call it blocked */
export const BLOCK_EVIDENCE = 4;
/** first wait before dialling again once judged blocked; doubles up to RETEST_MAX_MS */
const RETEST_MS = 60_000;
const RETEST_MAX_MS = 10 * 60_000;

export class Outbound {
  private everOpened = false;
  private readonly timedOutHosts = new Set<string>();
  private readonly timedOutDomains = new Set<string>();
  private blockedUntil = 0;
  private retestMs: number;
  /** one connection is let through as the re-test; the others wait for its answer */
  private testing = false;
  /** why it is blocked, for the one warning; undefined when it is not */
  blockedWhy: string | undefined;

  constructor(
    private readonly clock: Clock = systemClock,
    private readonly firstRetestMs = RETEST_MS,
  ) {
    this.retestMs = firstRetestMs;
  }

  /** Whether a connection may be tried now; false while judged blocked and not yet due for a re-test. */
  mayDial(): boolean {
    if (this.blockedWhy === undefined) return true;
    if (this.testing || this.clock.now() < this.blockedUntil) return false;
    this.testing = true;
    return true;
  }

  /** A connection opened: outbound SMTP works (again). Returns true when it had been judged blocked. */
  opened(): boolean {
    this.everOpened = true;
    this.timedOutHosts.clear();
    this.timedOutDomains.clear();
    const was = this.blockedWhy !== undefined;
    this.blockedWhy = undefined;
    this.testing = false;
    this.retestMs = this.firstRetestMs;
    return was;
  }

  /**
   * A connection failed to open. Returns true when this made the judgement
   * "blocked" (the caller says so once).
   */
  failed(host: string, domain: string, kind: 'refused' | 'connect-timeout'): boolean {
    if (this.blockedWhy !== undefined) {
      // the re-test failed too: wait longer before the next one
      if (this.testing) {
        this.testing = false;
        this.retestMs = Math.min(RETEST_MAX_MS, this.retestMs * 2);
        this.blockedUntil = this.clock.now() + this.retestMs;
      }
      return false;
    }
    // a refusal proves the packets get there and back: that host is dead, not our network
    if (kind !== 'connect-timeout' || this.everOpened) return false;
    this.timedOutHosts.add(host);
    this.timedOutDomains.add(domain);
    if (this.timedOutHosts.size < BLOCK_EVIDENCE || this.timedOutDomains.size < BLOCK_EVIDENCE) return false;
    this.blockedWhy = `connections to ${this.timedOutHosts.size} mail servers of ${this.timedOutDomains.size} domains timed out and none ever opened`;
    this.blockedUntil = this.clock.now() + this.retestMs;
    return true;
  }

  /** Our own set-up failed (the proxy refused us): judged blocked now, tried again later all the same. */
  broken(why: string): boolean {
    const first = this.blockedWhy === undefined;
    if (!first && this.testing) this.retestMs = Math.min(RETEST_MAX_MS, this.retestMs * 2);
    this.testing = false;
    this.blockedWhy = why;
    this.blockedUntil = this.clock.now() + this.retestMs;
    return first;
  }

  /** A dial that was let through ended without telling either way: another may re-test. */
  settled(): void {
    this.testing = false;
  }
}
