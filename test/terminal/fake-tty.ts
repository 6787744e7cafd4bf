import { EventEmitter } from 'node:events';

/**
 * A stand-in for a terminal on stderr: records every byte, and implements the
 * cursor methods of tty.WriteStream the way Node does (as escape codes), so a
 * test sees exactly what a terminal would receive.
 */
export class FakeTty extends EventEmitter {
  output = '';
  constructor(
    readonly isTTY = true,
    readonly columns = 100,
  ) {
    super();
  }
  write(chunk: string | Uint8Array): boolean {
    this.output += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    return true;
  }
  cursorTo(x: number): boolean {
    return this.write(`\x1b[${x + 1}G`);
  }
  moveCursor(_dx: number, dy: number): boolean {
    return this.write(dy < 0 ? `\x1b[${-dy}A` : `\x1b[${dy}B`);
  }
  clearLine(dir: number): boolean {
    return this.write(dir === 1 ? '\x1b[0K' : '\x1b[2K');
  }
  /** the visible text, escape codes removed */
  get text(): string {
    // eslint-disable-next-line no-control-regex
    return this.output.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
  }
}

// eslint-disable-next-line no-control-regex
export const ESC = /\x1b\[/;
