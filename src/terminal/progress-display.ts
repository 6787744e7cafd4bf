import type { Ora } from 'ora';
import type { Progress } from './progress.js';
import { fitLine, percentDone, progressLine, RateMeter, workDone } from './progress-line.js';
import type { TerminalPolicy, TerminalStream } from './style.js';
import { every, systemClock, type Clock } from '../time/clock.js';

/** how often the Progress object is read; ora animates the spinner on its own */
const TICK_MS = 150;

export interface ProgressDisplayOptions {
  stream: TerminalStream;
  policy: Pick<TerminalPolicy, 'animate' | 'color'>;
  /** what the rates, the ETA and the line's refresh are timed on (io.clock) */
  clock?: Clock;
}

/**
 * Polls the pipeline's Progress and shows it as one ora line on stderr, only
 * when the policy allows animation; otherwise start/stop do nothing, so a cron
 * log or a pipe never sees a carriage return.
 */
export class ProgressDisplay {
  private spinner: Ora | undefined;
  private stopTicking: (() => void) | undefined;
  private readonly meter = new RateMeter();
  /**
   * rows' worth of work per second (see workDone): with the input's size, the
   * ETA. A longer window and two seconds of work before the first ETA: batches
   * land in steps, and a rate read over a second or two of them swings the ETA
   * by half.
   */
  private readonly rowMeter = new RateMeter(30_000, 2_000);
  /** the highest percentage shown: an estimate of the rows that shrinks must not take the line backwards */
  private shown: number | undefined;
  private readonly clock: Clock;

  constructor(
    private readonly progress: Progress,
    private readonly options: ProgressDisplayOptions,
  ) {
    this.clock = options.clock ?? systemClock;
  }

  private stopped = false;

  /** Resolves once the line shows (ora is loaded only for a terminal: it costs start-up time). */
  async start(): Promise<void> {
    if (!this.options.policy.animate || this.spinner) return;
    const { default: ora } = await import('ora');
    // stopped while ora loaded: never draw
    if (this.stopped || this.spinner) return;
    this.spinner = ora({
      // ora wants a full tty.WriteStream; the fake in tests has the parts it uses.
      stream: this.options.stream as NodeJS.WritableStream,
      isEnabled: true,
      // stdin may be our input, and raw mode would swallow Ctrl-C's SIGINT.
      discardStdin: false,
      color: this.options.policy.color ? 'cyan' : false,
      text: this.text(),
    }).start();
    // The display must never be what keeps the process alive.
    this.stopTicking = every(this.clock, TICK_MS, () => this.tick(), { ref: false });
  }

  /** Reads the Progress once and updates the line; the timer calls it, tests may too. */
  tick(): void {
    if (this.spinner) this.spinner.text = this.text();
  }

  /** Prints whole lines above the progress line, which goes on below them. */
  interject(text: string): void {
    this.spinner?.clear();
    this.options.stream.write(text);
    this.spinner?.render();
  }

  /**
   * Stops the animation and clears the line, leaving the terminal as it was.
   * A run that got to its end draws its last state first (100%), so the line
   * never stops short of it between two ticks.
   */
  stop(): void {
    if (this.spinner && this.progress.inputDone && !this.stopped) {
      this.spinner.text = this.text();
      this.spinner.render();
    }
    this.stopped = true;
    this.stopTicking?.();
    this.stopTicking = undefined;
    this.spinner?.stop();
    this.spinner = undefined;
  }

  private text(): string {
    const now = this.clock.now();
    this.meter.sample(now, this.progress.addressesDone);
    this.rowMeter.sample(now, workDone(this.progress));
    const percent = percentDone(this.progress);
    if (percent !== undefined) this.shown = Math.max(this.shown ?? 0, percent);
    // read the width each time: a terminal may be resized mid-run
    return fitLine(progressLine(this.progress, now, this.meter.perSecond(), this.rowMeter.perSecond(), this.shown), this.options.stream.columns);
  }
}
