import type { Summary } from '../summary.js';
import { STATUSES, type Status } from '../verdict.js';
import { count, duration, percent, plural, printable, rate } from '../format.js';
import { paint, type Format } from './style.js';
import { checkedColumnsText } from './dry-run-report.js';

export interface SummaryTableOptions {
  color: boolean;
  /** where the verdicts went: a file name, or "stdout" */
  output: string;
  /** the --summary file, if any */
  summaryFile?: string;
  /** the --report file, if any */
  reportFile?: string;
  /** for an interrupted run: the rows taken from the input (some never answered), and whether that was all of it */
  input?: { rowsRead: number; inputDone: boolean };
}

const STATUS_STYLE: Record<Status, Format> = { valid: 'green', invalid: 'red', risky: 'yellow', unknown: 'magenta' };

/**
 * The end-of-run summary for stderr, e.g.
 *
 *   mailsift: 1,000 rows in 12 s (83/s), api engine
 *     valid       812  81.2%
 *     invalid     130  13.0%
 *     ...
 *
 * Numbers are right-aligned so the columns read at a glance; lines about
 * features that were not used (journal, cache) are left out.
 */
export function renderSummary(s: Summary, opts: SummaryTableOptions): string {
  const c = opts.color;
  const bold = (t: string) => paint(c, 'bold', t);
  const dim = (t: string) => paint(c, 'dim', t);
  const seconds = s.elapsedMs / 1000;
  const lines = [
    `${bold('mailsift')}: ${plural(s.total, 'row', 'rows')} in ${duration(s.elapsedMs)}` +
      (seconds > 0 ? ` (${rate(s.total / seconds)})` : '') +
      `, ${s.engine} engine`,
  ];

  const width = Math.max(...STATUSES.map((st) => count(s[st]).length));
  for (const st of STATUSES) {
    const label = paint(c, STATUS_STYLE[st], st.padEnd(9));
    lines.push(`  ${label} ${count(s[st]).padStart(width)}  ${dim(percent(s[st], s.total).padStart(6))}`);
  }

  const row = (label: string, text: string) => lines.push(`  ${dim(label.padEnd(9))} ${text}`);
  const reasons = Object.entries(s.reasons ?? {});
  if (reasons.length > 0) row('reasons', reasons.map(([r, n]) => `${r} ${count(n)}`).join(' · '));
  // empty cells are invalid rows, but no address: said apart, and --fail-on's shares leave them out
  if (s.empty > 0) row('empty', `${plural(s.empty, 'row has', 'rows have')} no address (reason empty), left out of --fail-on shares`);
  row('rows', `${plural(s.duplicates, 'duplicate', 'duplicates')} · ${count(s.prechecked)} rejected by precheck`);
  if (s.columns?.length) row(s.columns.length === 1 ? 'column' : 'columns', checkedColumnsText(s.columns));
  if (s.fromJournal > 0 || s.fromCache > 0) {
    row('reused', `${count(s.fromJournal)} from journal · ${count(s.fromCache)} from cache`);
  }
  if (s.engine === 'api') {
    // A wait is a pause for the window (pacing, or after a 429); a 429 is the server's refusal.
    row(
      'requests',
      `${count(s.requests)} · ${plural(s.retries, 'retry', 'retries')} · ${plural(s.rateLimitWaits ?? 0, 'rate-limit wait', 'rate-limit waits')}` +
        ` · ${plural(s.rateLimited, '429 answer', '429 answers')}`,
    );
    const flight = s.concurrency;
    if (flight && flight.peak > 0) {
      const mode = flight.mode === 'auto' ? 'adaptive' : 'pinned';
      row('in flight', `${mode} · at most ${count(flight.peak)} · ${flight.mean.toFixed(1)} on average`);
    }
  }
  if (s.smtp) {
    const m = s.smtp;
    row(
      'mailbox',
      `${count(m.asked)} asked · ${count(m.accepted)} accepted · ${count(m.refused)} refused · ${count(m.catchAll)} catch-all · ` +
        `${count(m.undetermined)} undetermined · ${plural(m.sessions, 'session', 'sessions')}`,
    );
  }
  if (s.disposableListVersion) row('lists', `disposable domains from disposable-email-domains ${s.disposableListVersion}`);
  if (s.errors > 0) {
    row('errors', paint(c, ['red', 'bold'], `${plural(s.errors, 'row', 'rows')} without a verdict (see the error column)`));
  }
  if (s.cacheLost) {
    const { cache, unstored } = s.cacheLost;
    row('cache', paint(c, ['yellow', 'bold'], printable(`${cache} went away mid-run: ${plural(unstored, 'verdict', 'verdicts')} not stored there`)));
  }
  if (s.interrupted) {
    // total counts the rows answered; rowsRead the rows taken from the input, which are
    // all of it only once it was read to its end (else "of 10,210" reads as the file's size)
    const read = opts.input?.rowsRead ?? s.total;
    const text =
      opts.input?.inputDone === false
        ? `interrupted: ${plural(s.total, 'row', 'rows')} written, of ${count(read)} read; the rest of the input was not read`
        : `interrupted: ${count(s.total)} of ${plural(read, 'row', 'rows')} written`;
    row('stopped', paint(c, ['yellow', 'bold'], text));
  }
  const removed = s.duplicatesRemoved ? `, ${plural(s.duplicatesRemoved, 'duplicate', 'duplicates')} left out by --unique` : '';
  const written = s.written === s.total ? '' : ` (${plural(s.written, 'row', 'rows')} written${removed})`;
  row(
    'output',
    // paths as typed may hold control characters
    printable(
      `${opts.output}${written}` + (opts.summaryFile ? ` · summary in ${opts.summaryFile}` : '') + (opts.reportFile ? ` · report in ${opts.reportFile}` : ''),
    ),
  );
  // Summary.warnings are left out: each was said on stderr when it arose, and
  // the --summary JSON keeps them.
  return lines.join('\n') + '\n';
}
