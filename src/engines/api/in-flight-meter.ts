import type { ConcurrencyStats } from '../../summary.js';

/** How many requests were in flight, at most and on average over the time any was: the summary's `concurrency`. */
export class InFlightMeter {
  /** in flight now */
  count = 0;
  private peak = 0;
  private firstAt: number | undefined;
  private lastChangeAt = 0;
  /** in flight × ms, summed since the first request */
  private area = 0;

  change(now: number, by: 1 | -1): void {
    this.firstAt ??= now;
    this.area += this.count * Math.max(0, now - this.lastChangeAt);
    this.lastChangeAt = now;
    this.count += by;
    this.peak = Math.max(this.peak, this.count);
  }

  stats(mode: ConcurrencyStats['mode']): ConcurrencyStats {
    const span = this.lastChangeAt - (this.firstAt ?? this.lastChangeAt);
    const mean = span > 0 ? this.area / span : this.peak;
    return { mode, peak: this.peak, mean: Math.round(mean * 10) / 10 };
  }
}
