import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Verdict } from '../../src/verdict.js';
import { csvCell } from '../../src/write/csv-cell.js';
import { resolveColumns } from '../../src/write/output-plan.js';
import { createRowWriter } from '../../src/write/row-writer.js';
import { Sink } from '../../src/write/sink.js';
import { cellText, VERDICT_COLUMNS, verdictCsv, verdictValue } from '../../src/write/verdict-columns.js';

const verdicts: Verdict[] = [
  {
    email: 'a@b.test', isValid: true, status: 'valid', confidence: 0.95, provider: 'p,q',
    details: { syntax: true, domain: 'b.test', mx: true, disposable: false, role: false, free: true, suggestion: '=a@b.test' },
  },
  { email: 'x', isValid: undefined, status: 'unknown', confidence: undefined, provider: '', details: {}, error: { code: 'TIMEOUT', message: 'm' } },
];

describe('verdictValue (for --columns and Excel)', () => {
  it('gives, column by column, the cells of the full CSV row', () => {
    for (const v of verdicts) {
      const byName = VERDICT_COLUMNS.map((c) => csvCell(cellText(verdictValue(v, c)))).join(',');
      expect(',' + byName).toBe(verdictCsv(v, csvCell));
    }
  });
});

describe('--columns CSV rows', () => {
  it('keep every cell in its column when a cell is empty (the first included)', async () => {
    let out = '';
    const stream = new Writable({ write: (chunk, _enc, done) => ((out += String(chunk)), done()) });
    const sink = new Sink(stream, 'test');
    const writer = createRowWriter('csv', sink, ['name', 'email'], resolveColumns(['confidence', 'status'], 'csv'));
    await writer.begin();
    writer.row(['', 'a@b.test'], verdicts[0]!);
    writer.row(['x', ''], verdicts[1]!);
    await sink.flush();
    expect(out).toBe('name,email,confidence,status\n,a@b.test,0.95,valid\nx,,,unknown\n');
  });

  it('a text input with an unknown value first', async () => {
    let out = '';
    const stream = new Writable({ write: (chunk, _enc, done) => ((out += String(chunk)), done()) });
    const sink = new Sink(stream, 'test');
    const writer = createRowWriter('csv', sink, ['email'], resolveColumns(['confidence', 'email'], 'text'));
    await writer.begin();
    writer.row(['x'], verdicts[1]!);
    await sink.flush();
    expect(out).toBe('confidence,email\n,x\n');
  });
});
