import { EXIT } from '../errors.js';
import { systemClock, type Clock } from '../time/clock.js';

export interface InterruptOptions {
  /** how long in-flight requests may still answer after the first signal */
  graceMs: number;
  /** one line for the user (stderr) */
  notice: (line: string) => void;
  /** where the signals arrive: the process (io.signals); tests pass an EventEmitter */
  target: { on(signal: TerminatingSignal, listener: () => void): unknown; off(signal: TerminatingSignal, listener: () => void): unknown };
  /** last resort if the clean-up itself hangs (a blocked pipe): exit with the code (io.exit) */
  forceExit: (code: number) => void;
  /** clean-up allowed after the grace period before forceExit; default FLUSH_MS */
  flushMs?: number;
  /**
   * Watching starts while the input is opened, before anything is sent (or any
   * temp file exists): a signal then ends the run at once. `sending()` ends this phase.
   */
  reading?: boolean;
  /** what the grace period and the forced exit are timed on (io.clock) */
  clock?: Clock;
}

export interface Interrupts {
  /** aborted at the first terminating signal (or when the reader of the output left): dispatch nothing more */
  readonly stop: AbortSignal;
  /** aborted when the grace period ends or at a second signal: give up on requests in flight */
  readonly abandon: AbortSignal;
  /** 128 + the signal's number (130 after SIGINT, 143 after SIGTERM), undefined if never interrupted */
  exitCode(): number | undefined;
  /** the input is open and requests may go out: from now on a signal lets those in flight answer */
  sending(): void;
  /**
   * The reader of the output left (`| head -1`): stop as a first signal does —
   * nothing more is sent, the requests in flight may answer (and reach the
   * journal) for the grace period, then are abandoned — but quietly, with no
   * exit code of its own.
   */
  readerGone(): void;
  /** stop listening (at the end of a run) and cancel the timers */
  dispose(): void;
}

/**
 * Every signal whose default action ends the process and that someone sends on
 * purpose: each gets SIGTERM's clean-up (the journal flushed, temp files
 * removed) and exits 128 + its number. Without a listener, SIGHUP (a closed
 * terminal or SSH session), SIGQUIT and SIGUSR2 killed the run at once, and
 * the answers in flight were paid for and lost. Left alone: SIGPIPE (node
 * ignores it), SIGPROF (V8's profiler), SIGUSR1 (ignored: bin/mailsift.js says why) and
 * the faults (SIGSEGV…), after which no JavaScript may run.
 */
export const CODES = {
  SIGINT: EXIT.sigint,
  SIGTERM: EXIT.sigterm,
  SIGHUP: EXIT.sighup,
  SIGQUIT: EXIT.sigquit,
  SIGUSR2: EXIT.sigusr2,
  SIGALRM: EXIT.sigalrm,
} as const;
export type TerminatingSignal = keyof typeof CODES;
const SIGNALS = Object.keys(CODES) as TerminatingSignal[];

/**
 * Ctrl-C and SIGTERM for a validate run (clig.dev): say something at once, stop
 * dispatching, let requests in flight answer for a bounded time so that what was
 * paid for reaches the output and the journal, then abandon them. A second
 * signal abandons at once; a third exits on the spot. Listening replaces Node's
 * default exit, so the caller must finish and set the exit code itself; if its
 * clean-up hangs anyway, `forceExit` ends the process after `flushMs` more.
 */
export function watchInterrupts(o: InterruptOptions): Interrupts {
  const { target, forceExit } = o;
  const flushMs = o.flushMs ?? FLUSH_MS;
  const stop = new AbortController();
  const abandon = new AbortController();
  const clock = o.clock ?? systemClock;
  /** the cancel functions of the timers set */
  const timers: (() => void)[] = [];
  let code: number | undefined;
  let count = 0;
  let reading = o.reading ?? false;

  const later = (ms: number, fn: () => void): void => {
    timers.push(clock.setTimer(fn, ms, { ref: false })); // never keep a finished run alive
  };

  const onSignal = (name: TerminatingSignal): void => {
    count++;
    const word = name === 'SIGINT' ? 'interrupted' : 'terminated';
    /** how the first notice names the signal: Ctrl-C and SIGTERM as they always were */
    const said = name === 'SIGINT' || name === 'SIGTERM' ? word : `${word} (${name})`;
    if (reading) {
      // Nothing sent, nothing written: the reader stops at once and says so (an
      // error of code 130/143, reason.exitCode); a read blocked on a silent pipe
      // is not waited for long. Temp files go with the process's 'exit' event.
      code ??= CODES[name];
      const reason = Object.assign(new Error(word), { exitCode: code });
      stop.abort(reason);
      abandon.abort(reason);
      const quit = (): void => {
        o.notice(`${said} while reading the input; nothing was sent`);
        forceExit(code!);
      };
      if (count === 1) later(READING_EXIT_MS, quit);
      else quit();
      return;
    }
    if (count === 1) {
      code = CODES[name];
      // SIGTERM comes from a supervisor (`timeout -k`, systemd, a container's
      // stop) that kills for good a few seconds later: the whole clean-up must
      // fit before that, temp files removed included. The other signals come
      // from no person waiting at a terminal either (a hang-up, a script).
      const graceMs = name === 'SIGINT' ? o.graceMs : Math.min(o.graceMs, TERM_GRACE_MS);
      o.notice(
        `${said}: sending nothing more; waiting up to ${Math.ceil(graceMs / 1000)}s for requests in flight` +
          (name === 'SIGINT' ? ' (Ctrl-C again to stop now)' : ''),
      );
      const reason = Object.assign(new Error(word), { exitCode: code });
      stop.abort(reason);
      later(graceMs, () => abandon.abort(reason));
      later(graceMs + flushMs, () => forceExit(code!));
    } else if (count === 2) {
      o.notice('stopping now: requests in flight are abandoned');
      abandon.abort(new Error('interrupted twice'));
    } else {
      forceExit(code!);
    }
  };
  const listeners = SIGNALS.map((name) => [name, () => onSignal(name)] as const);
  for (const [name, listener] of listeners) target.on(name, listener);

  return {
    stop: stop.signal,
    abandon: abandon.signal,
    exitCode: () => code,
    sending() {
      if (reading && code !== undefined) {
        // stopped as the input opened: nothing to wait for but the clean-up
        for (const cancel of timers.splice(0)) cancel();
        later(flushMs, () => forceExit(code!));
      }
      reading = false;
    },
    readerGone() {
      if (stop.signal.aborted) return;
      const reason = new Error('the reader of the output has gone');
      stop.abort(reason);
      later(o.graceMs, () => abandon.abort(reason));
    },
    dispose() {
      for (const [name, listener] of listeners) target.off(name, listener);
      for (const cancel of timers) cancel();
    },
  };
}

/** How long the clean-up after the grace period may take before the process exits anyway: flushing the rows so far and the journal takes well under a second. */
const FLUSH_MS = 3000;

/** The grace period after SIGTERM: its sender's kill follows (`timeout -k 5`: 5 s). */
const TERM_GRACE_MS = 1500;

/** How long a read interrupted before anything was sent may take to notice: a read waiting on a silent pipe does not. */
const READING_EXIT_MS = 2000;

/** How long requests in flight may still answer after Ctrl-C: brief, as users expect. */
export const INTERRUPT_GRACE_MS = 5000;

/** The closing line of an interrupted run: how to finish it (and, with the API, without paying twice). */
export function interruptedAdvice(journal: string | undefined, engine: 'api' | 'local'): string {
  if (engine === 'local') {
    // nothing is paid for: the journal only saves the DNS work
    return journal
      ? `stopped early; run the same command again to finish: --journal ${journal} keeps what was checked so far`
      : 'stopped early; a re-run starts over: add --journal FILE to resume where it stopped';
  }
  return journal
    ? `stopped early; run the same command again to finish: --journal ${journal} keeps every address answered so far from being sent again`
    : 'stopped early; addresses answered so far will be paid for again on a re-run: add --journal FILE to resume without paying twice';
}
