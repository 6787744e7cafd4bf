import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Verdict } from '../../src/verdict.js';
import { defusedCsvCell } from '../../src/write/csv-cell.js';
import { resolveColumns } from '../../src/write/output-plan.js';
import { createRowWriter } from '../../src/write/row-writer.js';
import { Sink } from '../../src/write/sink.js';
import { cellText, csvRowTail, VERDICT_COLUMNS, verdictValue } from '../../src/write/verdict-columns.js';
import { reasonOf } from '../../src/reason.js';

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
      const byName = VERDICT_COLUMNS.map((c) => defusedCsvCell(cellText(verdictValue(v, c, reasonOf(v))))).join(',');
      expect(',' + byName).toBe(csvRowTail(',')(v, reasonOf(v)));
    }
  });
});

describe('--columns CSV rows', () => {
  /** the CSV text written for these rows, header first */
  async function csv(header: string[], columns: ReturnType<typeof resolveColumns>, rows: [string[], Verdict][], escapeFormulas = false): Promise<string> {
    let out = '';
    const stream = new Writable({ write: (chunk, _enc, done) => ((out += String(chunk)), done()) });
    const sink = new Sink(stream, 'test');
    const writer = createRowWriter('csv', sink, header, columns, { escapeFormulas });
    await writer.begin();
    for (const [fields, v] of rows) writer.row(fields, v, reasonOf(v));
    await sink.flush();
    return out;
  }

  it('keep every cell in its column when a cell is empty (the first included)', async () => {
    const rows: [string[], Verdict][] = [[['', 'a@b.test'], verdicts[0]!], [['x', ''], verdicts[1]!]];
    expect(await csv(['name', 'email'], resolveColumns(['confidence', 'status'], 'csv'), rows))
      .toBe('name,email,confidence,status\n,a@b.test,0.95,valid\nx,,,unknown\n');
  });

  it('keep input cells as read and defuse the appended text that came from elsewhere (--columns and the full row alike)', async () => {
    const rows: [string[], Verdict][] = [[['+1 555 0100', '=a@b.test'], verdicts[0]!]];
    expect(await csv(['@phone', 'email'], resolveColumns(['suggestion', 'status'], 'csv'), rows)).toBe(
      "@phone,email,suggestion,status\n+1 555 0100,=a@b.test,'=a@b.test,valid\n",
    );
    expect(await csv(['@phone', 'email'], resolveColumns(['suggestion'], 'csv'), rows, true)).toBe(
      "'@phone,email,suggestion\n'+1 555 0100,'=a@b.test,'=a@b.test\n",
    );
  });

  it('a text input with an unknown value first', async () => {
    expect(await csv(['email'], resolveColumns(['confidence', 'email'], 'text'), [[['x'], verdicts[1]!]])).toBe('confidence,email\n,x\n');
  });
});
