import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { CharsetEncoder } from '../dialect.js';
import type { MailsiftError } from '../errors.js';
import { writeError } from '../fs/errno.js';

const BUFFER_SIZE = 256 * 1024;
/** characters joined before they are encoded */
const TEXT_RUN = 8 * 1024;
/** bytes buffered before drain() passes them on */
const CHUNK_SIZE = 64 * 1024;

/**
 * Buffers output text and writes it in large chunks, waiting for 'drain' when
 * the stream asks: a million small writes would cost more than the validation.
 * Text is encoded into a byte buffer a few kilobytes at a time, not joined
 * into one chunk string to be encoded again on write.
 */
export class Sink {
  private buffer = Buffer.allocUnsafe(0);
  /** bytes used in `buffer` */
  private used = 0;
  /** text not yet encoded into `buffer` */
  private text = '';
  /** aborted on EPIPE: the reader of the output has gone away */
  private readonly readerGone = new AbortController();
  /** any other write error, thrown by the next flush */
  private failure: MailsiftError | undefined;

  constructor(
    private readonly stream: Writable,
    /** what the output is called in an error: a file name, or "stdout" */
    label: string,
    /** another encoding than UTF-8 (a CSV in its input's encoding) */
    private readonly encoder?: CharsetEncoder,
    /**
     * a reader takes the rows as they come (stdout is a pipe): each drain()
     * passes them on. `| head -1` then has its line after the first answer
     * and leaves, and the next write finds it gone (EPIPE: the run stops
     * sending); held until 64 KiB, rows reached it a dozen answers later, each
     * paid for. A write per finished batch costs nothing beside its request.
     */
    private readonly live = false,
  ) {
    // A reader that went away (`| head -1`) ends the run quietly, not with EPIPE.
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') this.readerGone.abort();
      // A full disk is no bug: say what could not be written, without a stack.
      else this.failure ??= writeError(label, err);
    });
  }

  /** aborted once the reader of the output has gone away */
  get gone(): AbortSignal {
    return this.readerGone.signal;
  }

  /** Buffers text; call `drain()` after a run of writes to pass it on. */
  write(text: string): void {
    // Rows are short: joined first, they are encoded a few kilobytes at a time
    // rather than with a call each.
    this.text += text;
    if (this.text.length >= TEXT_RUN) this.encode();
  }

  private encode(): void {
    const text = this.text;
    this.text = '';
    if (this.encoder) {
      const bytes = this.encoder.encode(text);
      if (this.used + bytes.length > this.buffer.length) this.grow(bytes.length);
      this.used += bytes.copy(this.buffer, this.used);
      return;
    }
    // UTF-16 to UTF-8 takes at most 3 bytes per code unit
    if (this.used + text.length * 3 > this.buffer.length) this.grow(text.length * 3);
    this.used += this.buffer.write(text, this.used, 'utf8');
  }

  /** A fresh buffer with room for `bytes` more: the one flushed last may still be queued in the stream. */
  private grow(bytes: number): void {
    const next = Buffer.allocUnsafe(Math.max(BUFFER_SIZE, (this.used + bytes) * 2));
    this.buffer.copy(next, 0, 0, this.used);
    this.buffer = next;
  }

  /** Passes buffered text on once there is enough of it (any, when `live`), honouring backpressure (`flush` passes it on now). */
  async drain(): Promise<void> {
    if (this.used + this.text.length >= (this.live ? 1 : CHUNK_SIZE)) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.text) this.encode();
    if (this.used === 0 || this.readerGone.signal.aborted) {
      this.used = 0;
      return;
    }
    const bytes = this.buffer.subarray(0, this.used);
    // The stream keeps `bytes` until written: later text goes into a new buffer.
    this.buffer = Buffer.allocUnsafe(BUFFER_SIZE);
    this.used = 0;
    if (!this.stream.write(bytes)) await waitDrain(this.stream, () => this.readerGone.signal.aborted || this.failure !== undefined);
    // A reader gone fails the write at once, but says so (EPIPE) a tick later: heard
    // before the caller goes on, no batch is sent in between.
    else if (this.live) await new Promise<void>((resolve) => setImmediate(resolve));
  }

  /**
   * Flushes and ends the stream (not stdout, which Node owns, but whose
   * buffered writes it waits for); throws if anything could not be written.
   */
  async end(closeStream: boolean): Promise<void> {
    await this.flush();
    if (this.readerGone.signal.aborted) return;
    if (closeStream) {
      this.stream.end();
      // finished() also waits for a write error that comes after the end (fs streams)
      await finished(this.stream).catch(() => {});
    } else if (this.stream.writableNeedDrain) {
      await waitDrain(this.stream, () => this.failure !== undefined);
    }
    if (this.failure) throw this.failure;
  }
}

/**
 * Resolves at the stream's next 'drain' — or its 'error' or 'close', after
 * which none comes — with every listener removed again: a writer that waits
 * often must not pile them up. At once when `broken` already holds.
 */
export function waitDrain(stream: Writable, broken: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    if (broken()) return resolve();
    const done = (): void => {
      stream.off('drain', done);
      stream.off('error', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('error', done);
    stream.on('close', done);
  });
}
