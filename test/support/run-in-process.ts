import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Readable, Writable } from 'node:stream';
import type { Io } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import { systemClock, type Clock } from '../../src/time/clock.js';
import type { CliResult, RunOptions } from './run-cli.js';

/**
 * Runs `mailsift ARGS…` in this process, as the GitHub CLI's tests run a
 * command against IOStreams: `main(argv, io)` with buffers for stdin, stdout
 * and stderr, no terminal and no colour (unless `terminal` says), the
 * environment given and nothing of the developer's, and signals the test
 * sends itself. No process starts: a case costs milliseconds, not the
 * binary's start-up. The result has the shape of runCli's (run-cli.ts), so
 * that moving an end-to-end case here is a change of the function's name.
 *
 * Spawn the binary (runCli) for what only a real process shows: exit by a
 * signal, a real pipe closing, processes racing, the packed binary, the
 * process-level listeners of bin/mailsift.js.
 */
export async function runInProcess(args: string[], options: InProcessOptions = {}): Promise<InProcessResult> {
  const stdout = new Buffered(options.terminal);
  const stderr = new Buffered(options.terminal);
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', NO_COLOR: '1' };
  for (const [k, v] of Object.entries(options.env ?? {})) if (v !== undefined) env[k] = v;
  const cwd = resolve(options.cwd ?? process.cwd());
  let exited: (code: number) => void = () => {};
  const exit = new Promise<number>((done) => (exited = done));
  const io: Io = {
    stdin: stdinOf(options.stdin),
    stdout,
    stderr,
    env,
    cwd,
    clock: options.clock ?? systemClock,
    signals: options.signals ?? new EventEmitter(),
    // a forced exit (a second signal in serve, a clean-up past its time): the run's code, at once;
    // what the run was stuck on is left behind, as a process would leave it
    exit: (code) => exited(code),
    // nothing to hide: this process's argv is the test runner's
    maskArgv: () => false,
  };
  // a hung run fails its test, as runCli's kill does, instead of hanging it
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    const ms = options.timeoutMs ?? 60_000;
    timer = setTimeout(() => reject(new Error(`mailsift ${args.join(' ')}: no exit code after ${ms} ms`)), ms);
  });
  const code = await inDirectory(cwd, () => Promise.race([main(['node', 'mailsift', ...args], io), exit, timeout])).finally(() => clearTimeout(timer));
  const stdoutBytes = stdout.bytes();
  return {
    code,
    signal: null,
    stdout: stdoutBytes.toString('utf8'),
    stdoutBytes,
    stderr: stderr.bytes().toString('utf8'),
    file: (path) => readFileSync(resolve(cwd, path), 'utf8'),
    fileBytes: (path) => readFileSync(resolve(cwd, path)),
  };
}

export interface InProcessOptions extends RunOptions {
  /**
   * stdout and stderr are a terminal (`columns` wide, 80 by default); colour
   * stays off unless `colour` is true. Absent: neither is a terminal.
   */
  terminal?: { columns?: number; colour?: boolean };
  /** where the run listens for SIGINT, SIGTERM…: emit on it to interrupt the run */
  signals?: EventEmitter;
  /** the time the engines run on (default: the system's) */
  clock?: Clock;
}

export interface InProcessResult extends CliResult {
  code: number;
  stdoutBytes: Buffer;
  /** a file the run wrote, as text (a path relative to the run's directory); throws when there is none */
  file(path: string): string;
  fileBytes(path: string): Buffer;
}

/** A stream that keeps what is written to it, with the terminal facts a test gives it. */
class Buffered extends Writable {
  readonly isTTY: boolean;
  readonly columns: number | undefined;
  readonly colour: boolean;
  private readonly chunks: Buffer[] = [];

  constructor(terminal: InProcessOptions['terminal']) {
    super();
    this.isTTY = terminal !== undefined;
    this.columns = terminal === undefined ? undefined : (terminal.columns ?? 80);
    this.colour = terminal?.colour === true;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    this.chunks.push(chunk);
    done();
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

/** stdin: the bytes given, then its end (as runCli closes it, empty when none are given). Not a terminal. */
function stdinOf(content: string | Buffer | undefined): Io['stdin'] {
  const bytes = typeof content === 'string' ? Buffer.from(content) : (content ?? Buffer.alloc(0));
  return Readable.from(bytes.length > 0 ? [bytes] : [], { objectMode: false });
}

/**
 * The file system resolves a relative path against the process's working
 * directory: a run for another one is run there, one at a time, and the
 * directory is given back after it.
 */
let turn: Promise<unknown> = Promise.resolve();
async function inDirectory<T>(cwd: string, run: () => Promise<T>): Promise<T> {
  if (cwd === process.cwd()) return run();
  const mine = turn.then(async () => {
    const before = process.cwd();
    process.chdir(cwd);
    try {
      return await run();
    } finally {
      process.chdir(before);
    }
  });
  turn = mine.catch(() => {});
  return mine;
}
