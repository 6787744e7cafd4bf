import { UsageError } from '../errors.js';
import type { Status } from '../verdict.js';
import { statusesKept, type RowFilter } from './row-filter.js';
import { isVerdictColumn, VERDICT_COLUMNS, type VerdictColumn } from './verdict-columns.js';

export const OUTPUT_FORMATS = ['csv', 'json', 'ndjson', 'txt', 'xlsx'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/**
 * The format an output file's extension implies: csv for a name without
 * one (or stdout). An extension mailsift does not write (`.xls`, `.docx`,
 * `.tsv`) is refused: CSV bytes in a file named `.xls` open as garbage, or
 * not at all.
 */
function formatFromPath(path: string | undefined): OutputFormat {
  if (!path) return 'csv';
  const ext = /\.([^./\\]+)$/.exec(path)?.[1]?.toLowerCase();
  if (ext === undefined) return 'csv';
  const format = EXTENSION_FORMAT[ext];
  if (format === undefined) {
    throw new UsageError(
      `-o ${path}: mailsift does not write .${ext} files; name it .csv, .json, .ndjson, .txt or .xlsx, or say which format with --format`,
    );
  }
  return format;
}

const EXTENSION_FORMAT: Record<string, OutputFormat> = {
  csv: 'csv', json: 'json', ndjson: 'ndjson', jsonl: 'ndjson', txt: 'txt', xlsx: 'xlsx',
};

/**
 * What a row of output holds, in order: `input` stands for the input's own
 * cells (all of a table's columns, or a text list's `email`), the rest are
 * verdict columns.
 */
export interface Columns {
  order: readonly ('input' | VerdictColumn)[];
  /** the input's cells then every verdict column in the standard order: the CSV fast path applies */
  standard: boolean;
  /**
   * several columns checked (a table's): the names of the checked columns.
   * The verdict columns of `order` then come once for each, in this order,
   * each named after its column (`E-mail 2 - Value status`; see groupNames).
   */
  groups?: readonly string[];
}

export const ALL_COLUMNS: Columns = { order: ['input', ...VERDICT_COLUMNS], standard: true };

/** The output's header: the input's own, with the verdict columns in their places. */
export function columnNames(columns: Columns, header: readonly string[]): string[] {
  if (columns.groups) return [...header, ...groupNames(columns)];
  return columns.order.flatMap((c) => (c === 'input' ? header : [c]));
}

/** With several checked columns, the verdict columns of each, named after it: `Work Email status`, `Work Email reason`, … */
export function groupNames(columns: Columns): string[] {
  const verdictColumns = columns.order.filter((c): c is VerdictColumn => c !== 'input');
  return (columns.groups ?? []).flatMap((group) => verdictColumns.map((c) => `${group} ${c}`));
}

/** `--columns status,is_valid`: the names, checked and in the order given. */
function parseColumnList(value: string): string[] {
  const names = value.split(',').map((n) => n.trim().toLowerCase());
  if (names.some((n) => n === '')) throw new UsageError(`--columns ${value}: an empty column name`);
  for (const n of names) {
    if (n !== 'email' && !isVerdictColumn(n)) {
      throw new UsageError(`--columns: no column "${n}" (columns: email, ${VERDICT_COLUMNS.join(', ')})`);
    }
  }
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice) throw new UsageError(`--columns: "${twice}" is named twice`);
  return names;
}

export interface OutputFlags {
  output?: string;
  format?: OutputFormat;
  columns?: string;
  split?: string;
  filter?: RowFilter;
  bom?: boolean;
  escapeFormulas?: boolean;
}

/** Where and how the verdicts go, once the flags are known to fit together. */
export interface OutputPlan {
  format: OutputFormat;
  /** the column names asked for, not yet matched with the input's kind */
  columns?: string[];
  /** --split: one file per status in this directory */
  split?: { dir: string; statuses: readonly Status[] };
  /** a file, or undefined for stdout */
  file?: string;
  /** --bom: a UTF-8 byte order mark at the head of CSV output */
  bom: boolean;
  /** --escape-formulas: CSV input cells a spreadsheet would execute get a leading ' too */
  escapeFormulas: boolean;
}

/**
 * Checks the output flags against each other before anything is read or sent:
 * each mistake is one line naming it (exit 2). `stdoutIsTTY`: whether stdout is
 * a terminal, where a binary workbook must not go.
 */
export function planOutput(flags: OutputFlags, stdoutIsTTY = process.stdout.isTTY === true): OutputPlan {
  const file = flags.output && flags.output !== '-' ? flags.output : undefined;
  if (flags.split !== undefined && flags.output !== undefined) {
    throw new UsageError('--split and -o/--output do not go together: --split writes one file per status into its directory');
  }
  const format = flags.format ?? formatFromPath(file);
  const columns = flags.columns === undefined ? undefined : parseColumnList(flags.columns);
  if (columns && (format === 'json' || format === 'ndjson')) {
    throw new UsageError(`--columns shapes CSV, Excel and text output; --format ${format} writes whole result objects (pick fields with jq)`);
  }
  if (columns && format === 'txt') {
    throw new UsageError('--columns and --format txt do not go together: txt writes only the addresses');
  }
  if (format === 'xlsx' && !file && flags.split === undefined && stdoutIsTTY) {
    throw new UsageError('--format xlsx: an Excel workbook is binary; write it to a file with -o cleaned.xlsx');
  }
  if (flags.bom && format !== 'csv') {
    throw new UsageError(`--bom is for CSV output (Excel on Windows); --format ${format} is written without one`);
  }
  const split = flags.split === undefined ? undefined : { dir: flags.split, statuses: statusesKept(flags.filter ?? {}) };
  return { format, columns, split, file, bom: flags.bom === true, escapeFormulas: flags.escapeFormulas === true };
}

/**
 * The columns of a run, now that the input's kind is known, and, when a
 * table has several checked columns, their names (`groups`: the verdict
 * columns come once for each).
 */
export function resolveColumns(names: readonly string[] | undefined, inputKind: 'csv' | 'xlsx' | 'text', groups?: readonly string[]): Columns {
  const grouped = (c: Columns): Columns => (groups !== undefined && groups.length > 1 ? { ...c, groups } : c);
  if (names === undefined) return grouped(ALL_COLUMNS);
  if (inputKind !== 'text') {
    if (names.includes('email')) {
      throw new UsageError('--columns: "email" is for a text input; a table keeps all its own columns, and --columns picks the verdict columns after them');
    }
    return grouped(columnsOf(['input', ...names.filter(isVerdictColumn)]));
  }
  return columnsOf(names.map((n) => (n === 'email' ? 'input' : (n as VerdictColumn))));
}

function columnsOf(order: ('input' | VerdictColumn)[]): Columns {
  const standard = order.length === ALL_COLUMNS.order.length && order.every((c, i) => c === ALL_COLUMNS.order[i]);
  return { order, standard };
}
