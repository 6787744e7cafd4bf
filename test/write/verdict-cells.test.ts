import { describe, expect, it } from 'vitest';
import type { Verdict } from '../../src/verdict.js';
import { csvCell } from '../../src/write/csv-cell.js';
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
