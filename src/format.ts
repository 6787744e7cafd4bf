// Numbers, shares and durations as people read them, for the terminal and the HTML report.
// Fixed locale so that output (and tests) do not change with the user's LANG.
// Made on first use: ICU's start-up is felt in a short run.
let integer: Intl.NumberFormat | undefined;

/** 12345 → "12,345" */
export function count(n: number): string {
  integer ??= new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
  return integer.format(n);
}

/** part of whole as "12.3%"; "0.0%" when whole is 0 rather than NaN. */
export function percent(part: number, whole: number): string {
  return `${(whole === 0 ? 0 : (100 * part) / whole).toFixed(1)}%`;
}

/** 850 → "850 ms", 42_000 → "42 s", 185_000 → "3 min 05 s", 3_720_000 → "1 h 02 min" */
export function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) ms = 0;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return s % 60 === 0 ? `${s / 60} min` : `${Math.floor(s / 60)} min ${pad2(s % 60)} s`;
  const m = Math.round(s / 60);
  return `${Math.floor(m / 60)} h ${pad2(m % 60)} min`;
}

/** items per second with sensible precision: "0.4/s", "12/s", "1,234/s" */
export function rate(perSecond: number): string {
  if (!Number.isFinite(perSecond) || perSecond <= 0) return '0/s';
  return perSecond < 10 ? `${perSecond.toFixed(1)}/s` : `${count(perSecond)}/s`;
}

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}

/** "1 retry", "2 retries" */
export function plural(n: number, one: string, many: string): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}
