import type { Progress } from './progress.js';
import { count, duration, plural, rate } from '../format.js';

/**
 * Items per second over the last few seconds. A plain average since the
 * start would be skewed by journal/cache answers at the beginning and by
 * rate-limit pauses long gone; a short window follows what the server does now.
 * The time before the first item is done (start-up, the first batch's round
 * trip) is not counted: a rate that included it made the first ETAs about
 * twice too long (40 ms DNS: "ETA 28 s" two seconds in, done at 19 s).
 */
export class RateMeter {
  private samples: { at: number; done: number }[] = [];

  constructor(
    private readonly windowMs = 10_000,
    /** how long the samples must span before there is a rate to give */
    private readonly minSpanMs = 500,
  ) {}

  sample(at: number, done: number): void {
    // Nothing done yet since the first sample: the clock starts now, not then.
    if (this.samples.length === 1 && this.samples[0]!.done === done) {
      this.samples[0] = { at, done };
      return;
    }
    this.samples.push({ at, done });
    // Keep one sample older than the window so the window is always covered.
    while (this.samples.length > 2 && this.samples[1]!.at <= at - this.windowMs) this.samples.shift();
  }

  /** items per second, or undefined before the samples span minSpanMs */
  perSecond(): number | undefined {
    const first = this.samples[0];
    const last = this.samples[this.samples.length - 1];
    if (!first || !last || last.at - first.at < this.minSpanMs) return undefined;
    return ((last.done - first.done) * 1000) / (last.at - first.at);
  }
}

/**
 * How many rows the input holds: counted once it is read, else extrapolated from
 * the share of its bytes read so far (a file's size is known; stdin's is not).
 */
function estimatedRows(p: Progress): number | undefined {
  if (p.inputDone) return p.rowsRead;
  const b = p.inputBytes;
  if (!b?.total || b.read <= 0 || p.rowsRead === 0) return undefined;
  return Math.max(p.rowsRead, Math.round((p.rowsRead * b.total) / Math.min(b.read, b.total)));
}

/**
 * Rows' worth of work done: the rows answered — written, or waiting for an
 * earlier row whose batch is slow (counting only the rows written froze the
 * line at 13% for 55 s while 54,000 answers came in, and made the ETA 40 min
 * with 28 s to go) — plus the addresses the engine has checked (wholly or in
 * part) in batches not yet answered, so the figure moves while a batch waits
 * on DNS or SMTP, not only when its verdicts land. An address stands for a
 * row here: duplicates make that a slight underestimate.
 */
export function workDone(p: Progress): number {
  const inFlight = p.addressesQueued - p.addressesDone;
  const checked = p.addressesChecked - (p.addressesDone - p.addressesReused);
  return Math.max(p.rowsAnswered, p.rowsWritten) + Math.max(0, Math.min(inFlight, checked));
}

/** How far along the run is, in percent, once the input's size tells it; 100 only when the last row is out. */
export function percentDone(p: Progress): number | undefined {
  const rows = p.inputBytes?.total !== undefined ? estimatedRows(p) : undefined;
  if (rows === undefined || rows <= 0) return undefined;
  if (p.inputDone && p.rowsWritten >= rows) return 100;
  return Math.min(99, Math.floor((100 * workDone(p)) / rows));
}

/**
 * The text of the progress line, e.g.
 * "1,200 rows read · 980/1,150 addresses validated · 85/s · ETA 2 s", led by
 * "45%" once the input's size tells how far along the run is.
 * Pure: the time and the rates come in as arguments.
 */
export function progressLine(
  p: Progress,
  now: number,
  perSecond: number | undefined,
  /** rows' worth of work per second (see workDone) */
  rowsPerSecond?: number,
  /** the percentage to show: the display keeps it from running backwards when the estimate of the rows shrinks */
  percent = percentDone(p),
): string {
  const parts = [`${plural(p.rowsRead, 'row', 'rows')} read`];
  const rows = p.inputBytes?.total !== undefined ? estimatedRows(p) : undefined;
  // Work done over rows there are: the output side is what the user waits for.
  if (percent !== undefined) parts.unshift(`${percent}%`);
  parts.push(
    p.inputDone
      ? `${count(p.addressesDone)}/${plural(p.addressesQueued, 'address', 'addresses')} validated`
      : `${plural(p.addressesDone, 'address', 'addresses')} validated`,
  );
  const waitMs = p.rateLimitWaitUntil === undefined ? 0 : Math.max(0, p.rateLimitWaitUntil - now);
  if (waitMs > 0) parts.push(`waiting ${Math.ceil(waitMs / 1000)} s for the rate limit to reset`);
  else if (perSecond !== undefined) parts.push(rate(perSecond));
  // An ETA only once the total is known or estimated from the input's size: else it would be a guess.
  // A rate-limit wait is part of it: the rows left come after the pause.
  const left = p.addressesQueued - p.addressesDone;
  const rowsLeft = rows === undefined ? 0 : rows - workDone(p);
  let etaMs: number | undefined;
  if (rows !== undefined && rowsPerSecond !== undefined && rowsPerSecond > 0 && rowsLeft > 0) etaMs = (rowsLeft / rowsPerSecond) * 1000;
  // without the input's size (stdin), once it is read to its end: the addresses left at the addresses' rate
  else if (rows === undefined && p.inputDone && perSecond !== undefined && perSecond > 0 && left > 0) etaMs = (left / perSecond) * 1000;
  if (etaMs !== undefined) parts.push(`ETA ${duration(Math.ceil((etaMs + waitMs) / 1000) * 1000)}`); // whole seconds: ms would flicker
  return parts.join(' · ');
}

/**
 * The line cut to fit a terminal `columns` wide, beside the spinner's frame and
 * a space. A line that wraps is two lines, and a spinner that misjudges how
 * many to erase (a terminal narrower than it thinks, one resized mid-run)
 * leaves a frozen copy above whatever is printed next: the API engine's
 * rate-limit wait made the line 105 characters wide.
 */
export function fitLine(line: string, columns: number | undefined): string {
  if (!columns || columns <= 0) return line;
  // the frame, its space, and the last column, where some terminals wrap at once
  const room = Math.max(1, columns - 3);
  const chars = [...line];
  return chars.length <= room ? line : `${chars.slice(0, room - 1).join('')}…`;
}
