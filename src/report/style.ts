/**
 * The report's CSS, inline so the file stands alone. System fonts only (a
 * web font would be a fetch); `@page` and the print rules lay it out on A4
 * with its colours kept.
 */
export const REPORT_CSS = `
:root { --ink:#1f2328; --muted:#59636e; --line:#d1d9e0; --panel:#f6f8fa;
  --valid:#1a7f37; --invalid:#cf222e; --risky:#bf8700; --unknown:#6e7781; --fix:#0969da; }
* { box-sizing: border-box; }
html { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); background: #fff; }
main { max-width: 1040px; margin: 0 auto; padding: 28px 28px 40px; }
h1 { font-size: 24px; margin: 0 0 2px; }
h2 { font-size: 17px; margin: 0 0 10px; }
p { margin: 6px 0; }
.sub { color: var(--muted); margin: 0 0 18px; overflow-wrap: anywhere; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; vertical-align: middle; background: var(--panel); border: 1px solid var(--line); }
.badge.warn { background: #fff8c5; border-color: #d4a72c; }
.notice { background: #fff8c5; border: 1px solid #d4a72c; border-radius: 6px; padding: .5em .75em; }
section { margin: 0 0 22px; padding: 16px 18px; border: 1px solid var(--line); border-radius: 8px; break-inside: avoid; page-break-inside: avoid; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 10px 18px; margin: 0; }
.grid div { min-width: 0; }
.grid dt { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.grid dd { margin: 0; font-size: 18px; font-weight: 600; overflow-wrap: anywhere; }
.grid dd.small { font-size: 14px; font-weight: 500; }
table { width: 100%; border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 8px; text-align: left; border-bottom: 1px solid var(--line); vertical-align: middle; }
th { font-size: 12px; color: var(--muted); font-weight: 600; text-transform: uppercase; letter-spacing: .04em; }
td.n, th.n { text-align: right; white-space: nowrap; }
td.name { overflow-wrap: anywhere; max-width: 360px; }
td.chart, th.chart { width: 32%; }
tr:last-child td { border-bottom: 0; }
code { font: 13px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; white-space: nowrap; }
svg.stacked { display: block; width: 100%; height: 24px; border-radius: 4px; margin: 4px 0 12px; }
svg.stacked.mini { height: 12px; border-radius: 2px; margin: 0; }
svg.bar { display: block; width: 100%; height: 12px; }
.fill-valid { fill: var(--valid); } .fill-invalid { fill: var(--invalid); }
.fill-risky { fill: var(--risky); } .fill-unknown { fill: var(--unknown); }
.fill-fix { fill: var(--fix); } .fill-track { fill: #eef1f4; } .fill-empty { fill: #eef1f4; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; }
.swatch.valid { background: var(--valid); } .swatch.invalid { background: var(--invalid); }
.swatch.risky { background: var(--risky); } .swatch.unknown { background: var(--unknown); }
.steps { display: grid; grid-template-columns: repeat(auto-fit, minmax(180px, 1fr)); gap: 12px; }
.step { border: 1px solid var(--line); border-top: 4px solid var(--muted); border-radius: 6px; padding: 10px 12px; background: #fff; }
.step.send { border-top-color: var(--valid); } .step.fix { border-top-color: var(--fix); }
.step.retry { border-top-color: var(--unknown); } .step.suppress { border-top-color: var(--invalid); }
.step h3 { margin: 0; font-size: 15px; }
.step .big { font-size: 22px; font-weight: 700; }
.step ul { margin: 6px 0 0; padding-left: 18px; font-size: 13px; }
.step .get { font-size: 13px; margin-top: 8px; }
.step .get code { white-space: normal; overflow-wrap: anywhere; }
.muted { color: var(--muted); }
.note { color: var(--muted); font-size: 13px; }
ul.examples { margin: 8px 0 0; padding-left: 18px; }
ul.examples li { overflow-wrap: anywhere; }
footer { color: var(--muted); font-size: 12px; margin-top: 8px; }
@media (max-width: 640px) { main { padding: 16px; } .chart { display: none; } }
/* a phone held upright: the domain table's six columns fit in 420 px */
@media (max-width: 480px) { main { padding: 10px; } section { padding: 12px 10px; } th, td { padding: 4px 3px; } th { letter-spacing: 0; font-size: 11px; } table { font-size: 13px; } }
@page { size: A4; margin: 14mm 12mm; }
@media print {
  body { font-size: 10.5pt; }
  main { max-width: none; padding: 0; }
  section { border-color: #bbb; padding: 10px 12px; margin-bottom: 12px; }
  .steps { grid-template-columns: repeat(2, 1fr); }
  .grid { grid-template-columns: repeat(4, 1fr); }
}
`;
