import type { Verdict } from '../verdict.js';
import { VERDICT_COLUMNS } from './verdict-columns.js';

export type VerdictColumn = (typeof VERDICT_COLUMNS)[number];
/** One cell's value: an unknown value is `undefined` (an empty cell). */
export type CellValue = string | number | boolean | undefined;

/**
 * The value of one appended column, by name. The columns of the verdict itself
 * are named here; every other column is the detail of the same name in
 * camelCase (`catch_all` → `details.catchAll`), so a column added to
 * VERDICT_COLUMNS is selectable (`--columns`) and written to Excel without a
 * change here. verdictCsv stays the fast path for the full CSV row; a unit
 * test holds the two to the same cells.
 */
export function verdictValue(v: Verdict, column: VerdictColumn): CellValue {
  switch (column as string) {
    case 'status':
      return v.status;
    case 'is_valid':
      return v.isValid;
    case 'confidence':
      return v.confidence;
    case 'provider':
      return v.provider;
    case 'error':
      return v.error?.code;
    default: {
      const value = (v.details as Record<string, unknown>)[camel(column)];
      return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? value : undefined;
    }
  }
}

const camel = (column: string): string => column.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** Whether `name` is an appended column. */
export function isVerdictColumn(name: string): name is VerdictColumn {
  return (VERDICT_COLUMNS as readonly string[]).includes(name);
}
