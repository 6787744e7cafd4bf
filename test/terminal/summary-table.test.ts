import { describe, expect, it } from 'vitest';
import { emptySummary, type Summary } from '../../src/summary.js';
import { renderSummary } from '../../src/terminal/summary-table.js';
import { ESC } from './fake-tty.js';

function sample(over: Partial<Summary> = {}): Summary {
  return {
    ...emptySummary('api'),
    total: 1000,
    valid: 812,
    invalid: 130,
    risky: 40,
    unknown: 18,
    errors: 3,
    duplicates: 25,
    prechecked: 9,
    requests: 2,
    retries: 1,
    rateLimited: 1,
    rateLimitWaits: 4,
    elapsedMs: 12_500,
    written: 1000,
    fromJournal: 200,
    ...over,
  };
}

describe('renderSummary', () => {
  it('is a compact table of counts and shares, aligned, with where the output went', () => {
    expect(renderSummary(sample(), { color: false, output: 'cleaned.csv', summaryFile: 'run.json' })).toBe(
      [
        'mailsift: 1,000 rows in 13 s (80/s), api engine',
        '  valid     812   81.2%',
        '  invalid   130   13.0%',
        '  risky      40    4.0%',
        '  unknown    18    1.8%',
        '  rows      25 duplicates · 9 rejected by precheck',
        '  reused    200 from journal · 0 from cache',
        '  requests  2 · 1 retry · 4 rate-limit waits · 1 429 answer',
        '  errors    3 rows without a verdict (see the error column)',
        '  output    cleaned.csv · summary in run.json',
        '',
      ].join('\n'),
    );
  });

  it('leaves out what was not used and says how many rows --only kept', () => {
    const text = renderSummary(sample({ engine: 'local', errors: 0, fromJournal: 0, written: 812 }), { color: false, output: 'stdout' });
    expect(text).not.toMatch(/reused|requests|errors/);
    expect(text).toContain('output    stdout (812 rows written)');
  });

  it('names the --report file beside the output', () => {
    const text = renderSummary(sample(), { color: false, output: 'cleaned.csv', reportFile: 'report.html' });
    expect(text).toContain('output    cleaned.csv · report in report.html\n');
  });

  it('says how many requests were in flight: adaptive or pinned, at most and on average', () => {
    const auto = renderSummary(sample({ concurrency: { mode: 'auto', peak: 20, mean: 6.25 } }), { color: false, output: 'stdout' });
    expect(auto).toContain('  requests  2 · 1 retry · 4 rate-limit waits · 1 429 answer\n  in flight adaptive · at most 20 · 6.3 on average\n');
    const pinned = renderSummary(sample({ concurrency: { mode: 'fixed', peak: 4, mean: 3.9 } }), { color: false, output: 'stdout' });
    expect(pinned).toContain('  in flight pinned · at most 4 · 3.9 on average\n');
  });

  it('has a mailbox line only when the SMTP check was on', () => {
    expect(renderSummary(sample({ engine: 'local' }), { color: false, output: 'stdout' })).not.toMatch(/mailbox/);
    const smtp = { asked: 1200, accepted: 900, refused: 150, catchAll: 100, undetermined: 50, sessions: 1 };
    expect(renderSummary(sample({ engine: 'local', smtp }), { color: false, output: 'stdout' })).toContain(
      '  mailbox   1,200 asked · 900 accepted · 150 refused · 100 catch-all · 50 undetermined · 1 session\n',
    );
  });

  it('says an interrupted run is partial, with the rows read; and "1 row", never "1 rows"', () => {
    const text = renderSummary(sample({ total: 1, valid: 1, invalid: 0, risky: 0, unknown: 0, errors: 0, written: 1, interrupted: true }), {
      color: false,
      output: 'stdout',
      input: { rowsRead: 4000, inputDone: true },
    });
    expect(text).toMatch(/^mailsift: 1 row in /);
    expect(text).toContain('  stopped   interrupted: 1 of 4,000 rows written\n');
    // stopped before the input's end: what was read is not what the input holds
    const early = renderSummary(sample({ total: 9192, written: 9192, interrupted: true }), {
      color: false,
      output: 'stdout',
      input: { rowsRead: 10_210, inputDone: false },
    });
    expect(early).toContain('  stopped   interrupted: 9,192 rows written, of 10,210 read; the rest of the input was not read\n');
    expect(early).not.toContain('of 10,210 rows written');
    expect(renderSummary(sample(), { color: false, output: 'x' })).not.toContain('interrupted');
  });

  it('survives an empty run', () => {
    const text = renderSummary(emptySummary('local'), { color: false, output: 'stdout' });
    expect(text).toContain('  valid     0    0.0%\n');
  });

  it('uses colour only when allowed', () => {
    expect(renderSummary(sample(), { color: false, output: 'x' })).not.toMatch(ESC);
    const coloured = renderSummary(sample(), { color: true, output: 'x' });
    expect(coloured).toContain('\x1b[32mvalid');
    expect(coloured.replace(/\x1b\[[0-9;]*m/g, '')).toBe(renderSummary(sample(), { color: false, output: 'x' }));
  });
});
