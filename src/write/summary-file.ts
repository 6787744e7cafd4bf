import { open, rm, stat, type FileHandle } from 'node:fs/promises';
import { UsageError, writeError } from '../errors.js';
import type { Summary } from '../summary.js';

/**
 * `--summary FILE`, opened before the first request like every output (an
 * unwritable path found after a paid run would lose nothing but still fail it),
 * written at the end. A run that ends without a summary removes the file it
 * created, and leaves one that was there untouched.
 */
export class SummaryFile {
  private constructor(
    private readonly path: string,
    private readonly fh: FileHandle,
    private readonly created: boolean,
  ) {}

  static async open(path: string): Promise<SummaryFile> {
    const existed = await stat(path).then(
      () => true,
      () => false,
    );
    try {
      // 'a': proves the path writable without emptying a summary still there
      return new SummaryFile(path, await open(path, 'a', 0o666), !existed);
    } catch (err) {
      throw new UsageError(`cannot write the summary to ${path}: ${(err as Error).message}`, { cause: err });
    }
  }

  async write(summary: Summary): Promise<void> {
    try {
      await this.fh.truncate(0);
      await this.fh.writeFile(JSON.stringify(summary, null, 2) + '\n');
    } catch (err) {
      throw writeError(`the summary to ${this.path}`, err);
    } finally {
      await this.fh.close();
    }
  }

  /** The run ends without a summary. */
  async discard(): Promise<void> {
    await this.fh.close().catch(() => {});
    if (this.created) await rm(this.path, { force: true });
  }
}
