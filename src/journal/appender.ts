import type { FileHandle } from 'node:fs/promises';
import { MailsiftError, EXIT } from '../errors.js';

/**
 * Appends text to a file and resolves once it is on disk (fdatasync).
 *
 * Group commit: while one write+sync is under way, further appends queue up and
 * go out together in the next one. A run with four requests in flight thus pays
 * at most one sync at a time, however fast batches finish, with no timer to tune
 * and no window in which an acknowledged batch is not yet durable.
 *
 * After a failed write (full disk, I/O error) every later append fails with the
 * same error: the file may end in a partial line, and appending after it would
 * bury that damage in the middle of the file.
 */
export class DurableAppender {
  private pending: string[] = [];
  private waiters: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];
  private draining: Promise<void> | undefined;
  private failure: MailsiftError | undefined;

  constructor(
    private readonly fh: FileHandle,
    private readonly label: string,
    private readonly sync = true,
  ) {}

  append(text: string): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.pending.push(text);
      this.waiters.push({ resolve, reject });
      this.draining ??= this.drain();
    });
  }

  /** waits for everything appended so far, then closes the file */
  async close(): Promise<void> {
    await this.draining;
    await this.fh.close();
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0) {
      const text = this.pending.join('');
      const waiters = this.waiters;
      this.pending = [];
      this.waiters = [];
      try {
        await this.fh.appendFile(text, 'utf8');
        if (this.sync) await this.fh.datasync();
        for (const w of waiters) w.resolve();
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        this.failure ??= new MailsiftError(`cannot write ${this.label}: ${code ?? String(err)}`, EXIT.unexpected, {
          cause: err,
        });
        for (const w of [...waiters, ...this.waiters]) w.reject(this.failure);
        this.pending = [];
        this.waiters = [];
      }
    }
    this.draining = undefined;
  }
}
