import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { emptySummary } from '../../src/summary.js';
import type { Verdict } from '../../src/verdict.js';
import { ALL_COLUMNS } from '../../src/write/output-plan.js';
import { createXlsxWriter } from '../../src/write/xlsx-writer.js';

const verdict: Verdict = { email: 'a@b.test', isValid: true, status: 'valid', confidence: 0.9, provider: 'p', details: { domain: 'b.test' } };

describe('the Excel writer', () => {
  it('writes text that looks like a formula as a string cell, never a formula', async () => {
    const chunks: Buffer[] = [];
    const dest = new Writable({ write: (chunk: Buffer, _enc, done) => (chunks.push(chunk), done()) });
    const writer = await createXlsxWriter(dest, 'test.xlsx', ['=phone', 'email'], ALL_COLUMNS);
    await writer.begin();
    writer.row(['+1 555 0100', '=HYPERLINK("http://x")'], verdict, '');
    writer.row(['@SUM(A1)', '-1+2'], { ...verdict, provider: '=cmd', details: { suggestion: '=a@b.test' } }, '');
    await writer.end(emptySummary('local'));
    const ExcelJS = (await import('exceljs')).default;
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(Buffer.concat(chunks) as unknown as ArrayBuffer);
    const cells: unknown[] = [];
    book.worksheets[0]!.eachRow((row) => row.eachCell((cell) => cells.push(cell.formula ?? cell.value)));
    expect(cells).toEqual(expect.arrayContaining(['=phone', '+1 555 0100', '=HYPERLINK("http://x")', '@SUM(A1)', '-1+2', '=cmd', '=a@b.test']));
    book.worksheets[0]!.eachRow((row) => row.eachCell((cell) => expect(cell.type).not.toBe(ExcelJS.ValueType.Formula)));
  });

  it('waits for a slow output again and again without piling up listeners (no MaxListenersExceededWarning)', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on('warning', onWarning);
    try {
      const dest = new Writable({ highWaterMark: 16, write: (_chunk, _enc, done) => setImmediate(done) });
      const writer = await createXlsxWriter(dest, 'test.xlsx', ['email', 'note'], ALL_COLUMNS);
      await writer.begin();
      for (let i = 0; i < 20_000; i++) {
        writer.row([`a${i}@b.test`, `${i} ${Math.random()}`], verdict, '');
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
