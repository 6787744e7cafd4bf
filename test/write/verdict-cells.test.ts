import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Verdict } from '../../src/verdict.js';
import { cellWriters, defusedCsvCell } from '../../src/write/csv-cell.js';
import { resolveColumns } from '../../src/write/output-plan.js';
import { createRowWriter } from '../../src/write/row-writer.js';
import { Sink } from '../../src/write/sink.js';
import { cellText, csvRowTail, VERDICT_COLUMNS, verdictValue } from '../../src/write/verdict-columns.js';
import { reasonOf } from '../../src/reason.js';
import { seeded } from '../support/fault-server.js';

const verdicts: Verdict[] = [
  {
    email: 'a@b.test',
    isValid: true,
    status: 'valid',
    confidence: 0.95,
    provider: 'p,q',
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

describe('the full CSV row', () => {
  it('is the same whatever rows came before it (the tail around the domain is reused)', () => {
    // runs of verdicts that differ in one value at a time, every value a column shows among them
    const rand = seeded(7);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const tri = [true, false, undefined];
    const top: Record<string, unknown[]> = {
      status: ['valid', 'invalid', 'risky', 'unknown'],
      isValid: tri,
      confidence: [0.95, 0.5, 1, 0, undefined, Number.NaN],
      provider: ['p', 'q,r', '=x', ''],
      error: [undefined, { code: 'TIMEOUT', message: 'm' }, { code: '=E', message: 'm' }],
    };
    const details: Record<string, unknown[]> = {
      syntax: tri,
      domain: ['b.test', 'c.test', '-d.test', undefined],
      mx: tri,
      disposable: tri,
      role: tri,
      free: tri,
      suggestion: [undefined, 'a@b.test', '+x'],
      smtp: tri,
      catchAll: tri,
      dnsFailure: [undefined, 'nxdomain'],
      mailbox: [undefined, 'full'],
    };
    const tail = csvRowTail(';');
    let v: Verdict = verdicts[0]!;
    for (let n = 0; n < 3000; n++) {
      const d = { ...v.details } as Record<string, unknown>;
      const next = { ...v, details: d } as Record<string, unknown>;
      if (rand() < 0.5) {
        const key = pick(Object.keys(details));
        d[key] = pick(details[key]!);
      } else {
        const key = pick(Object.keys(top));
        next[key] = pick(top[key]!);
      }
      v = next as unknown as Verdict;
      const reason = rand() < 0.2 ? pick(['', 'role', 'typo'] as const) : reasonOf(v);
      const byName = VERDICT_COLUMNS.map((c) => cellWriters(';').defused(cellText(verdictValue(v, c, reason)))).join(';');
      expect(tail(v, reason)).toBe(';' + byName);
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
    const rows: [string[], Verdict][] = [
      [['', 'a@b.test'], verdicts[0]!],
      [['x', ''], verdicts[1]!],
    ];
    expect(await csv(['name', 'email'], resolveColumns(['confidence', 'status'], 'csv'), rows)).toBe(
      'name,email,confidence,status\n,a@b.test,0.95,valid\nx,,,unknown\n',
    );
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
