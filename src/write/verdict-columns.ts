import type { Reason } from '../reason.js';
import { defusedCsvCell } from './csv-cell.js';
import type { Verdict } from '../verdict.js';

/** A verdict with its reason (see reasonOf). */
export interface ReasonedVerdict {
  verdict: Verdict;
  reason: Reason | '';
}

/**
 * What one checked cell came to, for a row with several addresses: the
 * verdict of its address — of the deciding one when it lists several (see
 * pipeline/row-verdict.ts), each address's then in `addresses` —, or
 * `empty` for an empty cell.
 */
export interface CheckedCell extends ReasonedVerdict {
  addresses?: readonly ReasonedVerdict[];
}

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
 * The value of each appended column: the verdict's own fields, the row's
 * reason (worked out once, as the row leaves the pipeline, and handed on with
 * it), and the details by name. Adding a column to VERDICT_COLUMNS asks for
 * its value here; every writer (CSV, --columns, Excel, JSON's reason) reads
 * it from this one table.
 */
const VALUES: Record<VerdictColumn, (v: Verdict, reason: Reason | '') => CellValue> = {
  status: (v) => v.status,
  reason: (_v, reason) => reason || undefined,
  is_valid: (v) => v.isValid,
  confidence: (v) => v.confidence,
  provider: (v) => v.provider,
  syntax: (v) => v.details.syntax,
  domain: (v) => v.details.domain,
  mx: (v) => v.details.mx,
  disposable: (v) => v.details.disposable,
  role: (v) => v.details.role,
  free: (v) => v.details.free,
  suggestion: (v) => v.details.suggestion,
  smtp: (v) => v.details.smtp,
  catch_all: (v) => v.details.catchAll,
  error: (v) => v.error?.code,
};

/** The columns whose text comes from elsewhere (an API's provider, domain, suggestion, error code): they are defused. */
const FROM_ELSEWHERE: ReadonlySet<VerdictColumn> = new Set(['provider', 'domain', 'suggestion', 'error']);

/** The value of one appended column, by name; `reason` is the row's (see reasonOf). */
export function verdictValue(v: Verdict, column: VerdictColumn, reason: Reason | ''): CellValue {
  return VALUES[column](v, reason);
}

/**
 * Each appended column as a CSV cell; an unknown value is an empty cell. Only
 * the text from elsewhere can need quoting or defusing; the rest are statuses,
 * reasons, booleans and numbers.
 */
const CELLS = Object.fromEntries(
  VERDICT_COLUMNS.map((column) => {
    const value = VALUES[column];
    const cell = FROM_ELSEWHERE.has(column)
      ? (v: Verdict, reason: Reason | ''): string => {
          const x = value(v, reason);
          return x === undefined ? '' : defusedCsvCell(String(x));
        }
      : (v: Verdict, reason: Reason | ''): string => cellText(value(v, reason));
    return [column, cell];
  }),
) as Record<VerdictColumn, (v: Verdict, reason: Reason | '') => string>;
const ROW_CELLS = VERDICT_COLUMNS.map((column) => CELLS[column]);

/** One appended column as a CSV cell. */
export function verdictCell(v: Verdict, column: VerdictColumn, reason: Reason | ''): string {
  return CELLS[column](v, reason);
}

/** Every appended column as CSV text, leading comma included: the full row's tail. */
export function verdictCsv(v: Verdict, reason: Reason | ''): string {
  let text = '';
  for (let i = 0; i < ROW_CELLS.length; i++) text += ',' + ROW_CELLS[i]!(v, reason);
  return text;
}

/**
 * The result object of JSON/NDJSON output and of `check --json`: the spec's
 * Shape A bulk item, plus `reason` (empty for a plainly valid row), `input`
 * (the row's other cells, by column name, when the input has any) and `error`.
 */
export function resultObject(v: Verdict, reason: Reason | '', input?: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {
    email: v.email,
    isValid: v.isValid ?? null,
    status: v.status,
    reason,
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
export function inputKeys(header: readonly string[], checked: number | readonly number[]): (string | undefined)[] | undefined {
  const skip = typeof checked === 'number' ? [checked] : checked;
  if (header.length <= skip.length) return undefined;
  const seen = new Set<string>();
  return header.map((name, i) => {
    if (skip.includes(i)) return undefined;
    let key = name === '' ? `column ${i + 1}` : name;
    if (seen.has(key)) key = `${key} (${i + 1})`;
    seen.add(key);
    return key;
  });
}

/**
 * What a result object says beyond one verdict (JSON, NDJSON): the checked
 * cell as read (`cell`) when it is more than the address checked — a
 * name-addr, a `mailto:` URI, a list —; each address's result for a cell
 * that lists several (`addresses`); and with several checked columns, each
 * one's result by its name (`columns`), the row's own being the deciding one.
 */
export function withCells(
  out: Record<string, unknown>,
  fields: readonly string[],
  v: Verdict,
  header: readonly string[],
  checked: readonly number[] | undefined,
  cells: readonly CheckedCell[] | undefined,
): Record<string, unknown> {
  if (checked === undefined) return out;
  if (checked.length === 1) {
    const raw = fields[checked[0]!];
    if (raw !== undefined && raw.trim() !== v.email) out.cell = raw;
    const addresses = cells?.[0]?.addresses;
    if (addresses) out.addresses = addresses.map((a) => resultObject(a.verdict, a.reason));
    return out;
  }
  if (cells === undefined) return out;
  const seen = new Set<string>();
  out.columns = Object.fromEntries(
    checked.map((col, k) => {
      let key = header[col] || `column ${col + 1}`;
      if (seen.has(key)) key = `${key} (${col + 1})`;
      seen.add(key);
      const c = cells[k]!;
      const one = resultObject(c.verdict, c.reason);
      const raw = fields[col] ?? '';
      if (raw.trim() !== c.verdict.email) one.cell = raw;
      if (c.addresses) one.addresses = c.addresses.map((a) => resultObject(a.verdict, a.reason));
      return [key, one];
    }),
  );
  return out;
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
