import { reasonOf } from '../reason.js';
import type { Verdict } from '../verdict.js';
import type { CheckedCell } from '../write/row-writer.js';
import { precheckVerdict } from './precheck.js';

/**
 * How strongly a verdict argues against its row, for a row or a cell that
 * holds several addresses: a verdict the run could not get (an `error`, or
 * the run's own DNS or SMTP failing) first — the row is not done until a
 * re-run gets it —, then invalid, unknown, risky, valid.
 */
function severity(v: Verdict): number {
  if (v.error !== undefined || v.outage !== undefined) return 4;
  switch (v.status) {
    case 'invalid':
      return 3;
    case 'unknown':
      return 2;
    case 'risky':
      return 1;
    case 'valid':
      return 0;
  }
}

/** The verdict that speaks for several: the worst (see severity), the first of equals. */
export function deciding(verdicts: readonly Verdict[]): Verdict {
  let worst = verdicts[0]!;
  for (let i = 1; i < verdicts.length; i++) if (severity(verdicts[i]!) > severity(worst)) worst = verdicts[i]!;
  return worst;
}

const EMPTY = precheckVerdict('');

/**
 * A row's checked cells, each with the verdict of its addresses (in the
 * order of `cells`, flat): an empty cell is `empty`; a cell of one address
 * has its verdict; a cell that lists several has the deciding one's, and
 * each address's beside it. And the row's own verdict: the deciding one of
 * the cells that hold something, or `empty` when none does.
 */
export function cellVerdicts(cells: readonly (readonly string[])[], verdicts: readonly Verdict[]): { row: Verdict; cells: CheckedCell[] } {
  const out: CheckedCell[] = [];
  const filled: Verdict[] = [];
  let k = 0;
  for (const addresses of cells) {
    if (addresses.length === 0) {
      out.push({ verdict: EMPTY, reason: 'empty' });
      continue;
    }
    const own = verdicts.slice(k, k + addresses.length);
    k += addresses.length;
    const verdict = deciding(own);
    filled.push(verdict);
    out.push(
      own.length === 1
        ? { verdict, reason: reasonOf(verdict) }
        : { verdict, reason: reasonOf(verdict), addresses: own.map((v) => ({ verdict: v, reason: reasonOf(v) })) },
    );
  }
  return { row: filled.length > 0 ? deciding(filled) : EMPTY, cells: out };
}
