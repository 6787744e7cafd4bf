import { reasonOf } from '../reason.js';
import type { Verdict } from '../verdict.js';

/** The columns appended to every output row, in this order; never engine- or flag-dependent, so a script reading them works with any engine. */
export const VERDICT_COLUMNS = [
  'status', 'reason', 'is_valid', 'confidence', 'provider', 'syntax', 'domain',
  'mx', 'disposable', 'role', 'free', 'suggestion', 'smtp', 'catch_all', 'error',
] as const;

export type VerdictColumn = (typeof VERDICT_COLUMNS)[number];
/** One cell's value: an unknown value is `undefined` (an empty cell). */
export type CellValue = string | number | boolean | undefined;

/** Whether `name` is an appended column. */
export function isVerdictColumn(name: string): name is VerdictColumn {
  return (VERDICT_COLUMNS as readonly string[]).includes(name);
}

export const cellText = (v: CellValue): string => (v === undefined ? '' : String(v));

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
    case 'reason':
      return reasonOf(v) || undefined;
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

/**
 * The appended cells as CSV text (leading comma included); an unknown value is
 * an empty cell. Only the cells that come from outside (provider, domain,
 * suggestion, error code) can need quoting or defusing; the rest are statuses,
 * booleans and numbers.
 */
export function verdictCsv(v: Verdict, quote: (s: string) => string): string {
  const d = v.details;
  return `,${v.status},${reasonOf(v)},${cellText(v.isValid)},${cellText(v.confidence)},${quote(v.provider)},${cellText(d.syntax)},` +
    `${d.domain === undefined ? '' : quote(d.domain)},${cellText(d.mx)},${cellText(d.disposable)},${cellText(d.role)},` +
    `${cellText(d.free)},${d.suggestion === undefined ? '' : quote(d.suggestion)},${cellText(d.smtp)},${cellText(d.catchAll)},` +
    `${v.error ? quote(v.error.code) : ''}`;
}

/**
 * The result object of JSON/NDJSON output: the spec's Shape A bulk item, plus
 * `reason` (empty for a plainly valid row), `input` (the row's other cells, by
 * column name, when the input has any) and `error`.
 */
export function resultObject(v: Verdict, input?: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {
    email: v.email,
    isValid: v.isValid ?? null,
    status: v.status,
    reason: reasonOf(v),
    confidence: v.confidence ?? null,
    provider: v.provider,
    details: v.details,
  };
  if (input) out.input = input;
  if (v.error) out.error = v.error;
  return out;
}

/**
 * How a table's other cells are named in a result's `input`: by their header,
 * `column N` for a nameless one, `name (N)` for a name seen before — so no
 * cell is lost to a clash. Undefined when there is no other column.
 */
export function inputKeys(header: readonly string[], emailColumn: number): (string | undefined)[] | undefined {
  if (header.length <= 1) return undefined;
  const seen = new Set<string>();
  return header.map((name, i) => {
    if (i === emailColumn) return undefined;
    let key = name === '' ? `column ${i + 1}` : name;
    if (seen.has(key)) key = `${key} (${i + 1})`;
    seen.add(key);
    return key;
  });
}

/** The row's other cells, exactly as read, under `keys` (see inputKeys). */
export function inputObject(keys: readonly (string | undefined)[], fields: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < fields.length; i++) {
    // a cell past the header (a ragged row) is kept too
    const k = i < keys.length ? keys[i] : `column ${i + 1}`;
    if (k !== undefined) out[k] = fields[i]!;
  }
  return out;
}
