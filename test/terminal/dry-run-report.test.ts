import { describe, expect, it } from 'vitest';
import { dryRunEtaMs, renderDryRun, type DryRunFigures } from '../../src/terminal/dry-run-report.js';

const figures: DryRunFigures = {
  rows: 5000,
  distinctAddresses: 4800,
  duplicates: 200,
  prechecked: 30,
  empty: 0,
  alreadyKnown: 0,
  toSend: 4770,
  engine: 'api',
  batchSize: 100,
  requests: 48,
  concurrency: 4,
};

describe('dry-run report', () => {
  it('lists rows, distinct addresses, precheck rejects and the requests it would send', () => {
    expect(renderDryRun(figures, false)).toBe(
      [
        'mailsift --dry-run: nothing was sent',
        '  rows       5,000 (200 duplicates)',
        '  addresses  4,800 distinct',
        '  precheck   30 rows rejected without a call',
        '  to send    4,770 addresses in 48 bulk requests (batches of 100, 4 in flight)',
        "  eta        unknown: the rate limit is only learnt from the server's answers",
        '',
      ].join('\n'),
    );
  });

  it.each([
    [48, { requests: 60, windowSeconds: 60 }, 0],
    [60, { requests: 60, windowSeconds: 60 }, 0],
    [61, { requests: 60, windowSeconds: 60 }, 60_000],
    [48, { requests: 10, windowSeconds: 60 }, 240_000],
  ])('%d requests under %j take at least %d ms', (requests, rateLimit, ms) => {
    expect(dryRunEtaMs({ requests, rateLimit })).toBe(ms);
  });

  it('gives an ETA when the rate limit is known, and mentions journal/cache answers', () => {
    const text = renderDryRun({ ...figures, alreadyKnown: 1000, rateLimit: { requests: 10, windowSeconds: 60 } }, false);
    expect(text).toContain('  known      1,000 addresses answered by journal/cache');
    expect(text).toContain('  eta        at least 4 min (10 requests per 1 min)');
  });

  it('says the local engine sends no requests', () => {
    expect(renderDryRun({ ...figures, engine: 'local', requests: 0 }, false)).toContain('  to check   4,770 addresses with the local engine (no API requests)');
  });
});
