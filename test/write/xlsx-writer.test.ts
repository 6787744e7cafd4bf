import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { emptySummary } from '../../src/summary.js';
import type { Verdict } from '../../src/verdict.js';
import { ALL_COLUMNS } from '../../src/write/output-plan.js';
import { createXlsxWriter } from '../../src/write/xlsx-writer.js';

const verdict: Verdict = { email: 'a@b.test', isValid: true, status: 'valid', confidence: 0.9, provider: 'p', details: { domain: 'b.test' } };

describe('the Excel writer', () => {
  it('waits for a slow output again and again without piling up listeners (no MaxListenersExceededWarning)', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on('warning', onWarning);
    try {
      const dest = new Writable({ highWaterMark: 16, write: (_chunk, _enc, done) => setImmediate(done) });
      const writer = await createXlsxWriter(dest, 'test.xlsx', ['email', 'note'], ALL_COLUMNS);
      await writer.begin();
      for (let i = 0; i < 20_000; i++) {
        writer.row([`a${i}@b.test`, `${i} ${Math.random()}`], verdict);
        if (i % 100 === 0) await writer.drain();
      }
      await writer.end(emptySummary('local'));
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on a later tick
      expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
      expect(dest.listenerCount('drain')).toBeLessThanOrEqual(1);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
