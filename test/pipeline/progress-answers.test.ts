import { describe, expect, it } from 'vitest';
import { validateStream, type RunProgress } from '../../src/pipeline/validate-stream.js';
import type { InputRow } from '../../src/read/input-row.js';
import type { Validator } from '../../src/engines/validator.js';
import type { Verdict } from '../../src/verdict.js';
import { newProgress } from '../../src/terminal/progress.js';
import { percentDone } from '../../src/terminal/progress-line.js';

const verdict = (email: string): Verdict => ({ email, status: 'valid', isValid: true, confidence: 0.9, provider: 'p', details: { syntax: true } });

// Rows leave in input order, so one slow batch holds back the writing of every
// row after it while the other batches' answers keep coming. The pipeline's
// progress events count what was answered, so the progress line moves with
// the answers, not with the writing.
describe('progress counts what was answered, not only what was written', () => {
  it('while the first batch is slow, the answers of the others show in the progress events', async () => {
    const rows: InputRow[] = Array.from({ length: 1000 }, (_, i) => ({ fields: [`u${i}@x.io`], email: `u${i}@x.io` }));
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
    let calls = 0;
    const validator: Validator = {
      engine: 'api',
      validate: async (batch) => {
        if (calls++ === 0) await firstHeld;
        return batch.map(verdict);
      },
      stats: () => ({ requests: calls, retries: 0, rateLimited: 0 }),
      close: async () => {},
    };
    const events: RunProgress[] = [];
    const progress = { ...newProgress(Date.now()), inputBytes: { read: 1, total: 1 } };
    let whileHeld: { written: number; answered: number; percent: number | undefined } | undefined;
    const run = validateStream({
      input: {
        kind: 'text',
        header: ['email'],
        emailColumn: 0,
        rows: (async function* () {
          for (let i = 0; i < rows.length; i += 100) yield rows.slice(i, i + 100);
        })(),
        close: () => {},
      },
      validator,
      writer: { begin: async () => {}, row: () => {}, drain: async () => {}, end: async () => {} },
      batchSize: 100,
      concurrency: 8,
      onProgress: (p) => {
        events.push({ ...p });
        Object.assign(progress, p);
        // every batch but the first answered: none of their rows can be written yet
        if (!whileHeld && p.addressesDone === 900) {
          whileHeld = { written: p.rowsWritten, answered: p.rowsAnswered, percent: percentDone(progress) };
          releaseFirst();
        }
      },
    });
    const { summary } = await run;
    expect(summary.total).toBe(1000);
    expect(whileHeld).toEqual({ written: 0, answered: 900, percent: 90 });
    const last = events.at(-1)!;
    expect(last.rowsAnswered).toBe(1000);
    expect(last.rowsWritten).toBe(1000);
    // answered never runs behind written, nor backwards
    for (const [k, e] of events.entries()) {
      expect(e.rowsAnswered).toBeGreaterThanOrEqual(e.rowsWritten);
      if (k > 0) expect(e.rowsAnswered).toBeGreaterThanOrEqual(events[k - 1]!.rowsAnswered);
    }
  });

  it('rows answered at once (precheck, duplicates) count as answered when they are read', async () => {
    const emails = ['a@x.io', 'not an address', 'a@x.io', '', 'b@x.io'];
    const events: RunProgress[] = [];
    await validateStream({
      input: {
        kind: 'text',
        header: ['email'],
        emailColumn: 0,
        rows: (async function* () {
          yield emails.map((email) => ({ fields: [email], email }));
        })(),
        close: () => {},
      },
      validator: {
        engine: 'api',
        validate: async (batch) => batch.map(verdict),
        stats: () => ({ requests: 0, retries: 0, rateLimited: 0 }),
        close: async () => {},
      },
      writer: { begin: async () => {}, row: () => {}, drain: async () => {}, end: async () => {} },
      batchSize: 10,
      concurrency: 1,
      onProgress: (p) => void events.push({ ...p }),
    });
    expect(events.at(-1)!.rowsAnswered).toBe(5);
    expect(Math.max(...events.map((e) => e.rowsAnswered))).toBe(5);
  });
});
