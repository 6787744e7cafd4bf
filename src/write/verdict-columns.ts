import type { Reason } from '../reason.js';
import { cellWriters } from './csv-cell.js';
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
  'status',
  'reason',
  'is_valid',
  'confidence',
  'provider',
  'syntax',
  'domain',
  'mx',
  'disposable',
  'role',
  'free',
  'suggestion',
  'smtp',
  'catch_all',
  'error',
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

/** Each appended column as a CSV cell, and the full row's tail: made once per delimiter. */
interface CsvCells {
  cell: Record<VerdictColumn, (v: Verdict, reason: Reason | '') => string>;
  tail: (v: Verdict, reason: Reason | '') => string;
}

const csvCells = new Map<string, CsvCells>();

/**
 * Each appended column as a CSV cell in a file of `delimiter`; an unknown
 * value is an empty cell. Only the text from elsewhere can need quoting or
 * defusing; the rest are statuses, reasons, booleans and numbers.
 */
function cellsFor(delimiter: string): CsvCells {
  let cells = csvCells.get(delimiter);
  if (cells !== undefined) return cells;
  const { plain, defused } = cellWriters(delimiter);
  // a letter, digit or sign as the delimiter (a `sep=` line may name any) can be in a status or a number
  const ours = /[\w.+-]/.test(delimiter) ? (x: CellValue): string => plain(cellText(x)) : cellText;
  const cell = Object.fromEntries(
    VERDICT_COLUMNS.map((column) => {
      const value = VALUES[column];
      const write = FROM_ELSEWHERE.has(column)
        ? (v: Verdict, reason: Reason | ''): string => {
            const x = value(v, reason);
            return x === undefined ? '' : defused(String(x));
          }
        : (v: Verdict, reason: Reason | ''): string => ours(value(v, reason));
      return [column, write];
    }),
  ) as CsvCells['cell'];
  const cellsOf = (columns: readonly VerdictColumn[]): ((v: Verdict, reason: Reason | '') => string) => {
    const each = columns.map((column) => cell[column]);
    return (v, reason) => {
      let text = '';
      for (let i = 0; i < each.length; i++) text += delimiter + each[i]!(v, reason);
      return text;
    };
  };
  const at = VERDICT_COLUMNS.indexOf('domain');
  const before = cellsOf(VERDICT_COLUMNS.slice(0, at));
  const after = cellsOf(VERDICT_COLUMNS.slice(at + 1));
  const domain = cell.domain;
  cells = { cell, tail: tailOf(before, domain, after, delimiter) };
  csvCells.set(delimiter, cells);
  return cells;
}

/**
 * The full row's tail, built around the domain: a run's verdicts come in long
 * runs that differ only in the address and its domain, so the cells before
 * and after the domain are reused while every other value is the same as the
 * last row's (`sameButDomain`). Building the fifteen cells of every row took
 * about 0.15 s of CPU at 1M rows and most of the writer's garbage — two
 * strings a cell —; reused, a row's tail is three.
 */
function tailOf(
  before: (v: Verdict, reason: Reason | '') => string,
  domain: (v: Verdict, reason: Reason | '') => string,
  after: (v: Verdict, reason: Reason | '') => string,
  delimiter: string,
): (v: Verdict, reason: Reason | '') => string {
  let last: { v: Verdict; reason: Reason | ''; before: string; after: string } | undefined;
  return (v, reason) => {
    if (last === undefined || reason !== last.reason || !sameButDomain(v, last.v)) {
      last = { v, reason, before: before(v, reason) + delimiter, after: after(v, reason) };
    }
    return last.before + domain(v, reason) + last.after;
  };
}

/**
 * Whether every value the appended columns show, but the domain, is the
 * same in `a` and `b` (see VALUES; the reason is compared by the caller).
 * A column added to VALUES is compared here too: the writer's tests hold
 * the two together.
 */
function sameButDomain(a: Verdict, b: Verdict): boolean {
  const d = a.details;
  const e = b.details;
  return (
    a.status === b.status &&
    a.isValid === b.isValid &&
    a.confidence === b.confidence &&
    a.provider === b.provider &&
    a.error?.code === b.error?.code &&
    d.syntax === e.syntax &&
    d.mx === e.mx &&
    d.disposable === e.disposable &&
    d.role === e.role &&
    d.free === e.free &&
    d.suggestion === e.suggestion &&
    d.smtp === e.smtp &&
    d.catchAll === e.catchAll
  );
}

/** Every appended column as CSV text in a file of `delimiter`, leading delimiter included: the full row's tail. Looked up once by a writer, not per row. */
export function csvRowTail(delimiter: string): (v: Verdict, reason: Reason | '') => string {
  return cellsFor(delimiter).tail;
}

/** The cell writer of one appended column in a file of `delimiter`. */
export function csvVerdictCell(delimiter: string): (v: Verdict, column: VerdictColumn, reason: Reason | '') => string {
  const { cell } = cellsFor(delimiter);
  return (v, column, reason) => cell[column](v, reason);
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
 * How a table's other cells are named in a result's `input`, so that every
 * cell has a key of its own: a name keeps its header the first time it
 * appears; a nameless column is `column N`, a name seen before `name (N)` (N
 * its column number), and where that too is some column's name, ` (2)`, ` (3)`
 * … is added until it is free. Undefined when there is no other column.
 */
export function inputKeys(header: readonly string[], checked: number | readonly number[]): (string | undefined)[] | undefined {
  const skip = typeof checked === 'number' ? [checked] : checked;
  if (header.length <= skip.length) return undefined;
  const keys: (string | undefined)[] = header.map(() => undefined);
  const taken = new Set<string>();
  // first, each name where it first appears: a later `a (4)` must not take the name of column 4's own `a (4)`
  header.forEach((name, i) => {
    if (!skip.includes(i) && name !== '' && !taken.has(name)) {
      taken.add(name);
      keys[i] = name;
    }
  });
  header.forEach((name, i) => {
    if (skip.includes(i) || keys[i] !== undefined) return;
    const base = name === '' ? `column ${i + 1}` : `${name} (${i + 1})`;
    let key = base;
    for (let n = 2; taken.has(key); n++) key = `${base} (${n})`;
    taken.add(key);
    keys[i] = key;
  });
  return keys;
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

/**
 * The row's other cells, exactly as read, under `keys` (see inputKeys), in an
 * object without a prototype: a header named `__proto__` is a key like any
 * other, not the object's prototype (JSON.stringify writes it as one).
 */
export function inputObject(keys: readonly (string | undefined)[], fields: readonly string[]): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  for (let i = 0; i < fields.length; i++) {
    // a cell past the header (a ragged row) is kept too
    const k = i < keys.length ? keys[i] : `column ${i + 1}`;
    if (k !== undefined) out[k] = fields[i]!;
  }
  return out;
}
