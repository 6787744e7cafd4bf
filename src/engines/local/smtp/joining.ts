/** A domain's addresses and its mail hosts, best preference first. */
export interface DomainJob {
  domain: string;
  hosts: readonly string[];
  emails: readonly string[];
}

/** What `claim` made of a request's addresses. */
export interface Claim<F> {
  /** the jobs to check here, with only the addresses no one else is checking */
  mine: DomainJob[];
  /** addresses another check is already running for: their findings, when it ends (undefined when it gave none) */
  joined: [string, Promise<F | undefined>][];
  /** addresses past the limit of pending checks: answered without one */
  overflow: string[];
  /** hands each of `emails` its finding from `from` (nothing when absent), and ends its claim */
  release(emails: Iterable<string>, from: ReadonlyMap<string, F>): void;
  /** ends every claim still open (an aborted or failed check leaves nobody waiting) */
  releaseAll(): void;
}

/**
 * Checks already running, by address: a second asker (another request, in
 * serve) waits for the first one's finding instead of asking the server
 * again; and at most `maxPending` addresses are pending at once, so that
 * serve's memory stays bounded whatever its clients send.
 */
export class Joining<F> {
  private readonly running = new Map<string, Promise<F | undefined>>();

  constructor(private readonly maxPending?: number) {}

  /** addresses whose check is under way now */
  get size(): number {
    return this.running.size;
  }

  claim(jobs: readonly DomainJob[]): Claim<F> {
    const settle = new Map<string, (f: F | undefined) => void>();
    const mine: DomainJob[] = [];
    const joined: [string, Promise<F | undefined>][] = [];
    const overflow: string[] = [];
    for (const job of jobs) {
      const emails: string[] = [];
      for (const e of job.emails) {
        const running = this.running.get(e);
        if (running !== undefined) joined.push([e, running]);
        else if (this.maxPending !== undefined && this.running.size >= this.maxPending) overflow.push(e);
        else {
          emails.push(e);
          this.running.set(e, new Promise((resolve) => settle.set(e, resolve)));
        }
      }
      if (emails.length > 0) mine.push({ ...job, emails });
    }
    const release = (emails: Iterable<string>, from: ReadonlyMap<string, F>) => {
      for (const e of emails) {
        const done = settle.get(e);
        if (!done) continue;
        settle.delete(e);
        this.running.delete(e);
        done(from.get(e));
      }
    };
    return { mine, joined, overflow, release, releaseAll: () => release([...settle.keys()], new Map()) };
  }
}
