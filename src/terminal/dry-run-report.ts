import { count, duration, plural, printable } from '../format.js';
import { paint } from './style.js';
import type { CheckedColumn, DryRunCounts } from '../summary.js';

/** What a dry run found (the pipeline computes it, this module only formats it), and how it would send. */
export interface DryRunFigures extends DryRunCounts {
  engine: 'api' | 'local';
  batchSize: number;
  /** --concurrency: pinned, or auto (it follows the server) */
  concurrency: number | 'auto';
  /** the server's limit, when a previous run's journal learnt it */
  rateLimit?: { requests: number; windowSeconds: number };
}

/**
 * A lower bound for the run's duration under a known rate limit: the first
 * window's worth of requests goes at once, each further window waits a full
 * window. Latency is unknown before sending anything, so it is left out.
 */
export function dryRunEtaMs(f: Pick<DryRunFigures, 'requests' | 'rateLimit'>): number | undefined {
  if (!f.rateLimit || f.rateLimit.requests <= 0) return undefined;
  const windows = Math.ceil(f.requests / f.rateLimit.requests);
  return Math.max(0, windows - 1) * f.rateLimit.windowSeconds * 1000;
}

/** `"Work Email" (3), found by its name` — the checked columns, as the dry run and the summary say them. */
export function checkedColumnsText(columns: readonly CheckedColumn[]): string {
  const how = { flag: 'as --column says', header: 'found by its name', content: 'found by its cells' }[columns[0]!.by];
  return printable(columns.map((c) => (c.name === '' ? `column ${c.number}` : `${JSON.stringify(c.name)} (${c.number})`)).join(', ')) + `, ${how}`;
}

export function renderDryRun(f: DryRunFigures, color: boolean): string {
  const dim = (t: string) => paint(color, 'dim', t);
  const row = (label: string, text: string) => `  ${dim(label.padEnd(10))} ${text}`;
  const lines = [
    `${paint(color, 'bold', 'mailsift --dry-run')}: nothing was sent`,
    row('rows', `${count(f.rows)} (${plural(f.duplicates, 'duplicate', 'duplicates')})`),
  ];
  if (f.columns?.length) lines.push(row(f.columns.length === 1 ? 'column' : 'columns', checkedColumnsText(f.columns)));
  lines.push(row('addresses', `${count(f.distinctAddresses)} distinct`), row('precheck', `${plural(f.prechecked, 'row', 'rows')} rejected without a call`));
  if (f.empty > 0) lines.push(row('empty', `${plural(f.empty, 'row has', 'rows have')} no address (reason empty, nothing sent)`));
  if (f.alreadyKnown > 0) lines.push(row('known', `${plural(f.alreadyKnown, 'address', 'addresses')} answered by journal/cache`));
  if (f.engine === 'local') {
    lines.push(row('to check', `${plural(f.toSend, 'address', 'addresses')} with the local engine (no API requests)`));
  } else {
    lines.push(
      row(
        'to send',
        `${plural(f.toSend, 'address', 'addresses')} in ${plural(f.requests, 'bulk request', 'bulk requests')} ` +
          `(batches of ${count(f.batchSize)}, ${f.concurrency === 'auto' ? 'in flight as the server allows, up to 64' : `${f.concurrency} in flight`})`,
      ),
    );
    const eta = dryRunEtaMs(f);
    if (f.rateLimit && eta !== undefined) {
      const limit = `${plural(f.rateLimit.requests, 'request', 'requests')} per ${duration(f.rateLimit.windowSeconds * 1000)}`;
      lines.push(row('eta', eta === 0 ? `within one rate-limit window (${limit})` : `at least ${duration(eta)} (${limit})`));
    } else {
      lines.push(row('eta', "unknown: the rate limit is only learnt from the server's answers"));
    }
  }
  return lines.join('\n') + '\n';
}
