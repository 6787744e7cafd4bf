import type { FileHandle } from 'node:fs/promises';
import { MailsiftError, EXIT } from '../errors.js';

/**
 * Appends text to a file: `append` resolves once the text is written (in the
 * operating system's hands, safe from a crash or a kill of this process), and
 * the file is flushed to disk (fdatasync) at most `syncMs` later, and at close.
 *
 * Group commit: while one write is under way, further appends queue up and go
 * out together in the next one, and one sync covers every write before it.
 * Syncing on a timer instead of per batch keeps the disk's latency off the
 * pipeline's path (`npm run bench journal`: a sync per batch cost 20–40% at a
 * million rows on a fast pipeline); what a power cut can lose is the last
 * `syncMs` of verdicts, which a re-run then pays for again — never a wrong one.
 *
 * After a failed write or sync (full disk, I/O error) every later append fails
 * with the same error: the file may end in a partial line, and appending after
 * it would bury that damage in the middle of the file.
 */
export class DurableAppender {
  private pending: string[] = [];
  private waiters: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];
  private draining: Promise<void> | undefined;
  private failure: MailsiftError | undefined;
  private syncTimer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> | undefined;
  private dirty = false;
  private scratch = Buffer.allocUnsafe(0);
  /** the failure already reached a caller of append: close need not repeat it */
  private reported = false;

  constructor(
    private readonly fh: FileHandle,
    private readonly label: string,
    private readonly syncMs = 100,
  ) {}

  append(text: string): Promise<void> {
    if (this.failure) {
      this.reported = true;
      return Promise.reject(this.failure);
    }
    return new Promise((resolve, reject) => {
      this.pending.push(text);
      this.waiters.push({ resolve, reject });
      this.draining ??= this.drain();
    });
  }

  /** writes and syncs everything appended so far; throws a failure no append has reported yet */
  async flush(): Promise<void> {
    await this.draining;
    clearTimeout(this.syncTimer);
    this.syncTimer = undefined;
    await this.sync();
    if (this.failure && !this.reported) {
      this.reported = true;
      throw this.failure;
    }
  }

  /** flushes, then closes the file */
  async close(): Promise<void> {
    try {
      await this.flush();
    } finally {
      await this.fh.close();
    }
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0) {
      const text = this.pending.join('');
      const waiters = this.waiters;
      this.pending = [];
      this.waiters = [];
      try {
        await this.write(text);
        this.dirty = true;
        if (!this.syncTimer) {
          this.syncTimer = setTimeout(() => {
            this.syncTimer = undefined;
            void this.sync();
          }, this.syncMs);
          this.syncTimer.unref(); // close() syncs anyway; never keep a finished run alive
        }
        for (const w of waiters) w.resolve();
      } catch (err) {
        this.fail(err);
        this.reported = true;
        for (const w of [...waiters, ...this.waiters]) w.reject(this.failure);
        this.pending = [];
        this.waiters = [];
      }
    }
    this.draining = undefined;
  }

  /**
   * Encodes into one buffer kept for the file's life (writes go one at a time):
   * a fresh buffer per batch is a thousand large allocations per million rows.
   */
  private async write(text: string): Promise<void> {
    // UTF-16 to UTF-8 takes at most 3 bytes per code unit
    const room = text.length * 3;
    if (this.scratch.length < room) this.scratch = Buffer.allocUnsafe(room);
    const bytes = this.scratch.subarray(0, this.scratch.write(text, 0, 'utf8'));
    // the file is open for appending: every write goes to its end
    for (let done = 0; done < bytes.length; ) {
      const { bytesWritten } = await this.fh.write(bytes, done, bytes.length - done);
      if (bytesWritten === 0) throw Object.assign(new Error('no progress writing'), { code: 'EIO' });
      done += bytesWritten;
    }
  }

  private async sync(): Promise<void> {
    await this.syncing;
    if (!this.dirty || this.failure) return;
    this.dirty = false;
    this.syncing = this.fh.datasync().catch((err: unknown) => this.fail(err));
    await this.syncing;
    this.syncing = undefined;
  }

  private fail(err: unknown): void {
    const code = (err as NodeJS.ErrnoException).code;
    this.failure ??= new MailsiftError(`cannot write ${this.label}: ${code ?? String(err)}`, EXIT.unexpected, { cause: err });
  }
}
