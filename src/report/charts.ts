import { html, type Html } from './html.js';

/**
 * Charts as inline SVG: drawn by the browser from the file itself, nothing
 * fetched, no script. Colours come from the page's CSS classes (`fill-*`), so
 * the screen and the printout agree.
 */

export interface Segment {
  label: string;
  rows: number;
  /** a CSS class suffix: `fill-${tone}` */
  tone: string;
}

/** One bar split into segments by their share of `total`. */
export function stackedBar(segments: readonly Segment[], total: number, label: string, size: 'wide' | 'mini' = 'wide'): Html {
  let x = 0;
  const rects = segments
    .filter((s) => s.rows > 0)
    .map((s) => {
      const w = total === 0 ? 0 : (1000 * s.rows) / total;
      const rect = html`<rect class="fill-${s.tone}" x="${x.toFixed(2)}" y="0" width="${w.toFixed(2)}" height="24"><title>${s.label}: ${s.rows}</title></rect>`;
      x += w;
      return rect;
    });
  return html`<svg class="stacked ${size}" viewBox="0 0 1000 24" preserveAspectRatio="none" role="img" aria-label="${label}"><rect class="fill-empty" width="1000" height="24"/>${rects}</svg>`;
}

/** A bar whose length is `rows` against `max`, for a row of a table. */
export function bar(rows: number, max: number, tone: string): Html {
  const w = max === 0 ? 0 : Math.max(rows > 0 ? 4 : 0, (400 * rows) / max);
  return html`<svg class="bar" viewBox="0 0 400 16" preserveAspectRatio="none" aria-hidden="true"><rect class="fill-track" width="400" height="16"/><rect class="fill-${tone}" width="${w.toFixed(2)}" height="16"/></svg>`;
}
