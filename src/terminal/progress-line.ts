import type { Progress } from './progress.js';
import { count, duration, plural, rate } from '../format.js';

/**
 * Addresses per second over the last few seconds. A plain average since the
 * start would be skewed by journal/cache answers at the beginning and by
 * rate-limit pauses long gone; a short window follows what the server does now.
 */
export class RateMeter {
  private samples: { at: number; done: number }[] = [];

  constructor(private readonly windowMs = 10_000) {}

  sample(at: number, done: number): void {
    this.samples.push({ at, done });
    // Keep one sample older than the window so the window is always covered.
    while (this.samples.length > 2 && this.samples[1]!.at <= at - this.windowMs) this.samples.shift();
  }

  /** addresses per second, or undefined before there are two samples a moment apart */
  perSecond(): number | undefined {
    const first = this.samples[0];
    const last = this.samples[this.samples.length - 1];
    if (!first || !last || last.at - first.at < 500) return undefined;
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
 * The text of the progress line, e.g.
 * "1,200 rows read · 980/1,150 addresses validated · 85/s · ETA 2 s", led by
 * "45%" once the input's size tells how far along the run is.
 * Pure: the time and the rates come in as arguments.
 */
export function progressLine(p: Progress, now: number, perSecond: number | undefined, rowsPerSecond?: number): string {
  const parts = [`${plural(p.rowsRead, 'row', 'rows')} read`];
  const rows = p.inputBytes?.total !== undefined ? estimatedRows(p) : undefined;
  // Rows written, over rows there are: the output side is what the user waits for.
  // Below 100% until the last row is out, however the estimate rounds.
  if (rows !== undefined && rows > 0) {
    const done = p.inputDone && p.rowsWritten >= rows;
    parts.unshift(`${done ? 100 : Math.min(99, Math.floor((100 * p.rowsWritten) / rows))}%`);
  }
  parts.push(
    p.inputDone
      ? `${count(p.addressesDone)}/${plural(p.addressesQueued, 'address', 'addresses')} validated`
      : `${plural(p.addressesDone, 'address', 'addresses')} validated`,
  );
  const waitMs = p.rateLimitWaitUntil === undefined ? 0 : p.rateLimitWaitUntil - now;
  if (waitMs > 0) {
    parts.push(`waiting ${Math.ceil(waitMs / 1000)} s for the rate limit to reset`);
    return parts.join(' · ');
  }
  if (perSecond !== undefined) parts.push(rate(perSecond));
  // An ETA only once the total is known or estimated from the input's size: else it would be a guess.
  const left = p.addressesQueued - p.addressesDone;
  const rowsLeft = rows === undefined ? 0 : rows - p.rowsWritten;
  if (rows !== undefined && rowsPerSecond !== undefined && rowsPerSecond > 0 && rowsLeft > 0) {
    parts.push(`ETA ${duration(Math.ceil(rowsLeft / rowsPerSecond) * 1000)}`); // whole seconds: ms would flicker
  } else if (p.inputDone && perSecond !== undefined && perSecond > 0 && left > 0) {
    parts.push(`ETA ${duration(Math.ceil(left / perSecond) * 1000)}`);
  }
  return parts.join(' · ');
}
