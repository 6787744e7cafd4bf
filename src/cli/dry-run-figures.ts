import type { Summary } from '../summary.js';
import type { DryRunFigures } from '../terminal/dry-run-report.js';
import type { Validator } from '../engines/validator.js';
import { errorVerdict, type Verdict } from '../verdict.js';
import type { RowWriter } from '../write/row-writer.js';

/**
 * --dry-run runs the real pipeline (reading, precheck, dedupe, journal/cache
 * lookups, batching) against a validator that only counts what it would have
 * sent, and a writer that writes nothing: the figures cannot drift from what a
 * real run does, and nothing leaves the machine.
 */
export class CountingValidator implements Validator {
  batches = 0;
  addresses = 0;

  constructor(readonly engine: 'api' | 'local') {}

  async validate(emails: readonly string[]): Promise<Verdict[]> {
    this.batches++;
    this.addresses += emails.length;
    // An error verdict is never recorded in a journal or cache.
    return emails.map((e) => errorVerdict(e, 'DRY_RUN', 'not sent'));
  }

  stats() {
    return { requests: 0, retries: 0, rateLimited: 0 };
  }

  async close(): Promise<void> {}
}

export const discardingWriter: RowWriter = {
  begin: async () => {},
  row: () => {},
  drain: async () => {},
  end: async () => {},
};

export function dryRunFigures(
  summary: Summary,
  counted: CountingValidator,
  plan: { batchSize: number; concurrency: number; rateLimit?: DryRunFigures['rateLimit'] },
): DryRunFigures {
  const alreadyKnown = summary.fromJournal + summary.fromCache;
  return {
    rows: summary.total,
    distinctAddresses: counted.addresses + alreadyKnown,
    duplicates: summary.duplicates,
    prechecked: summary.prechecked,
    alreadyKnown,
    toSend: counted.addresses,
    engine: counted.engine,
    batchSize: plan.batchSize,
    requests: counted.engine === 'api' ? counted.batches : 0,
    concurrency: plan.concurrency,
    ...(plan.rateLimit ? { rateLimit: plan.rateLimit } : {}),
  };
}
