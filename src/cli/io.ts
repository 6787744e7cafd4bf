import type { Readable, Writable } from 'node:stream';
import { systemClock, type Clock } from '../time/clock.js';
import { CODES, type TerminatingSignal } from './interrupt.js';

/**
 * Everything of the world a command touches, passed in (as the GitHub CLI's
 * IOStreams): `main(argv, io)` and each command's `run(plan, io)` reach for
 * `process` only through it. The real one is `processIo()`; a test's
 * (test/support/run-in-process.ts) has buffers for streams, no terminal, no
 * colour and signals it sends itself, so that a command runs in-process.
 */
export interface Io {
  readonly stdin: InStream;
  readonly stdout: OutStream;
  readonly stderr: OutStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  /**
   * The working directory relative paths are taken from. The file system
   * resolves them against the process's, so an io for another directory is
   * run there (the in-process test helper changes to it for the run).
   */
  readonly cwd: string;
  /** the time the engines run on (a fake one in tests) */
  readonly clock: Clock;
  /** where SIGINT, SIGTERM, SIGHUP… arrive: the process, or an emitter a test fires */
  readonly signals: Signals;
  /**
   * Ends the process now with `code`, whatever it is blocked on: the one way
   * around `main` returning its code, for two callers only, where the event
   * loop may be held by what they escape — a second signal in `serve`, and the
   * forced exit after an interrupted run's grace period (interrupt.ts).
   */
  exit(code: number): void;
  /**
   * Rewrites the command line others see in `ps` with `text` shown as
   * `shown` (a password given in argv); false when argv did not hold it.
   */
  maskArgv(text: string, shown: string): boolean;
}

/**
 * A stream written to, with its terminal facts: whether it is a terminal and
 * how wide; `fd` when it is one of the process's own descriptors (only then do
 * the checks by device and inode apply: `-o /dev/stdout`, `> in.csv`).
 * `colour`, when set, says whether colour is allowed on it; unset, the
 * terminal layer decides from `isTTY` and the environment (terminal/style.ts).
 */
export type OutStream = Writable & { readonly isTTY?: boolean; readonly columns?: number; readonly fd?: number; readonly colour?: boolean };

/** The stream read: stdin, a terminal or not; `setRawMode` on a terminal (login's hidden prompt). */
export type InStream = Readable & { readonly isTTY?: boolean; readonly fd?: number; setRawMode?(raw: boolean): unknown };

export interface Signals {
  on(signal: NodeJS.Signals, listener: () => void): unknown;
  off(signal: NodeJS.Signals, listener: () => void): unknown;
}

/** This process, as a command sees it. */
export function processIo(): Io {
  return {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    clock: systemClock,
    signals: process,
    exit: exitNow,
    maskArgv(text, shown) {
      if (!process.argv.some((a) => a.includes(text))) return false;
      try {
        // on Linux, node's process.title overwrites the argv area `ps` reads
        process.title = process.argv.map((a) => a.split(text).join(shown)).join(' ');
      } catch {
        // not supported here: the caller's warning stands
      }
      return true;
    },
  };
}

/**
 * Ends the process now with `code`, whatever it is blocked on. process.exit
 * waits for libuv's worker threads, and one stuck in a system call no signal
 * interrupts (open() of a FIFO nobody reads) would hold it for good; so the
 * 'exit' hooks run (temp files removed), then the process dies of the signal
 * it was sent — which the shell reports as 130 or 143, as if we exited so.
 */
function exitNow(code: number): void {
  process.exitCode = code;
  try {
    process.emit('exit', code);
  } catch {
    // a hook failed: exit all the same
  }
  // SIGQUIT's default action dumps core — the memory of a process that holds the API key: exit with its number instead
  const signal = (Object.keys(CODES) as TerminatingSignal[]).find((name) => CODES[name] === code && name !== 'SIGQUIT');
  if (signal !== undefined) {
    process.removeAllListeners(signal); // the default action again: death by the signal
    process.kill(process.pid, signal);
  }
  process.exit(code);
}
