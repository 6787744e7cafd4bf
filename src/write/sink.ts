import type { Writable } from 'node:stream';

/**
 * Buffers output text and writes it in large chunks, waiting for 'drain' when
 * the stream asks: a million small writes would cost more than the validation.
 */
export class Sink {
  private parts: string[] = [];
  private length = 0;
  /** set on EPIPE: the reader of the output has gone away */
  private readerGone = false;
  /** any other write error, thrown by the next flush */
  private failure: Error | undefined;

  constructor(
    private readonly stream: Writable,
    private readonly chunkSize = 64 * 1024,
  ) {
    // A reader that went away (`| head -1`) ends the run quietly, not with EPIPE.
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') this.readerGone = true;
      else this.failure = err;
    });
  }

  /** true once the reader of the output has gone away */
  get gone(): boolean {
    return this.readerGone;
  }

  /** Buffers text; call `drain()` after a run of writes to pass it on. */
  write(text: string): void {
    this.parts.push(text);
    this.length += text.length;
  }

  /** Passes buffered text on once there is enough of it, honouring backpressure (`flush` passes it on now). */
  async drain(): Promise<void> {
    if (this.length >= this.chunkSize) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.length === 0 || this.readerGone) {
      this.parts = [];
      this.length = 0;
      return;
    }
    const text = this.parts.join('');
    this.parts = [];
    this.length = 0;
    if (!this.stream.write(text)) await waitDrain(this.stream, () => this.readerGone || this.failure !== undefined);
  }

  /** flushes and ends the stream (not stdout, which Node owns) */
  async end(closeStream: boolean): Promise<void> {
    await this.flush();
    if (!closeStream || this.readerGone) return;
    await new Promise<void>((resolve, reject) => {
      this.stream.end((err?: Error | null) => (err ? reject(err) : resolve()));
    });
  }
}

function waitDrain(stream: Writable, broken: () => boolean): Promise<void> {
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
