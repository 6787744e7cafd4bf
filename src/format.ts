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

/**
 * Control characters that change what a terminal or a page shows instead of
 * showing themselves: C0 (escape, carriage return, newline…), DEL, C1, and the
 * bidirectional controls (a right-to-left override shows `…gpj.csv` as
 * `…vsc.jpg`: Trojan Source, CVE-2021-42574).
 */
// eslint-disable-next-line no-control-regex
export const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text from elsewhere (a file name, a sheet name, an API's error code) made safe
 * to print on one line: each control character is shown as its escape (`\x1B`,
 * `\u202E`), so an error message can neither retitle the terminal, clear it,
 * break into two lines, nor reorder what it says.
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).toUpperCase().padStart(2, '0')}` : `\\u${code.toString(16).toUpperCase().padStart(4, '0')}`;
  });
}
