import { DEFAULT_DIALECT, unicodeEncoding, type Dialect, type Eol } from '../dialect.js';
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
    throw new UsageError(`-o ${path}: mailsift does not write .${ext} files; name it .csv, .json, .ndjson, .txt or .xlsx, or say which format with --format`);
  }
  return format;
}

const EXTENSION_FORMAT: Record<string, OutputFormat> = {
  csv: 'csv',
  json: 'json',
  ndjson: 'ndjson',
  jsonl: 'ndjson',
  txt: 'txt',
  xlsx: 'xlsx',
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
  /** put before each appended column's name in a header: `mailsift_` when the input has a column of one of their names (see appendedPrefix) */
  prefix: string;
  /**
   * several columns checked (a table's): the names of the checked columns.
   * The verdict columns of `order` then come once for each, in this order,
   * each named after its column (`E-mail 2 - Value status`; see groupNames).
   */
  groups?: readonly string[];
}

export const ALL_COLUMNS: Columns = { order: ['input', ...VERDICT_COLUMNS], standard: true, prefix: '' };

/** The output's header: the input's own, with the verdict columns in their places. */
export function columnNames(columns: Columns, header: readonly string[]): string[] {
  if (columns.groups) return [...header, ...groupNames(columns)];
  return columns.order.flatMap((c) => (c === 'input' ? header : [columns.prefix + c]));
}

/** With several checked columns, the verdict columns of each, named after it: `Work Email status`, `Work Email reason`, … */
export function groupNames(columns: Columns): string[] {
  const verdictColumns = columns.order.filter((c): c is VerdictColumn => c !== 'input');
  return (columns.groups ?? []).flatMap((group) => verdictColumns.map((c) => `${columns.prefix}${group} ${c}`));
}

/** A header name as a spreadsheet, a CRM import or a database sees it: `Status ` and `status` are one column. */
const nameKey = (name: string): string => name.trim().toLowerCase();

/**
 * The prefix the appended columns' names take so that none shares a name with
 * an input column (`status`, `Reason`: compared without case or surrounding
 * spaces): '' when none would, else `mailsift_` — or `mailsift2_`, ... when
 * the input has such names too. All of them take it, so a script looks for one
 * spelling. `clashes` are the input's names that asked for it, for the notice.
 */
export function appendedPrefix(order: Columns['order'], header: readonly string[]): { prefix: string; clashes: string[] } {
  const taken = new Set(header.map(nameKey));
  const appended = order.filter((c): c is VerdictColumn => c !== 'input');
  const clashes = header.filter((name, i) => appended.includes(nameKey(name) as VerdictColumn) && header.findIndex((h) => nameKey(h) === nameKey(name)) === i);
  if (clashes.length === 0) return { prefix: '', clashes };
  for (let n = 1; ; n++) {
    const prefix = n === 1 ? 'mailsift_' : `mailsift${n}_`;
    if (appended.every((c) => !taken.has(prefix + c))) return { prefix, clashes };
  }
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
  /** --bom / --no-bom */
  bom?: boolean;
  outputDelimiter?: string;
  outputEol?: Eol;
  outputEncoding?: string;
  escapeFormulas?: boolean;
}

/** What the flags change of the CSV output's dialect; the rest follows the input (see outputDialect). */
export interface DialectFlags {
  /** --output-delimiter */
  delimiter?: string;
  /** --output-eol */
  eol?: Eol;
  /** --output-encoding */
  encoding?: string;
  /** --bom (true) or --no-bom (false) */
  bom?: boolean;
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
  /** CSV output: what the flags change of the input's dialect */
  dialect: DialectFlags;
  /** --escape-formulas: CSV input cells a spreadsheet would execute get a leading ' too */
  escapeFormulas: boolean;
}

/**
 * Checks the output flags against each other before anything is read or sent:
 * each mistake is one line naming it (exit 2). `stdoutIsTTY`: whether stdout is
 * a terminal, where a binary workbook must not go.
 */
export function planOutput(flags: OutputFlags, stdoutIsTTY: boolean): OutputPlan {
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
  const dialect: DialectFlags = {
    ...(flags.outputDelimiter === undefined ? {} : { delimiter: flags.outputDelimiter }),
    ...(flags.outputEol === undefined ? {} : { eol: flags.outputEol }),
    ...(flags.outputEncoding === undefined ? {} : { encoding: flags.outputEncoding }),
    ...(flags.bom === undefined ? {} : { bom: flags.bom }),
  };
  // A terminal shows UTF-8, and a BOM or UTF-16's zero bytes as garbage: the
  // input's encoding is for a file a spreadsheet opens
  if (!file && flags.split === undefined && stdoutIsTTY) {
    dialect.encoding ??= 'utf-8';
    dialect.bom ??= false;
  }
  if (format !== 'csv') {
    const given = [
      ['--bom', flags.bom === true],
      ['--no-bom', flags.bom === false],
      ['--output-delimiter', dialect.delimiter !== undefined],
      ['--output-eol', dialect.eol !== undefined],
      ['--output-encoding', dialect.encoding !== undefined],
    ].find(([, on]) => on);
    if (given) throw new UsageError(`${given[0]} is for CSV output (how a spreadsheet opens it); --format ${format} is written as that format says`);
  }
  if (dialect.bom === true && dialect.encoding !== undefined) bomFits(dialect.encoding);
  const split = flags.split === undefined ? undefined : { dir: flags.split, statuses: statusesKept(flags.filter ?? {}) };
  return { format, columns, split, file, dialect, escapeFormulas: flags.escapeFormulas === true };
}

/** --bom with an encoding that has no byte-order mark (Windows-1252): exit 2. */
function bomFits(encoding: string): void {
  if (unicodeEncoding(encoding) === undefined) {
    throw new UsageError(`--bom: ${encoding} has no byte-order mark; for UTF-8 with one, add --output-encoding utf-8`);
  }
}

/**
 * The CSV output's dialect: the input's (a workbook or a list from elsewhere
 * has none: comma, LF, UTF-8), changed by the flags. An input's BOM is kept
 * when the output's encoding can have one; `sep=` is kept, with the output's
 * delimiter. --bom with an encoding that has none is exit 2, before any request.
 */
export function outputDialect(input: Dialect | undefined, flags: DialectFlags): Dialect {
  const base = input ?? DEFAULT_DIALECT;
  const encoding = flags.encoding ?? base.encoding;
  if (flags.bom === true) bomFits(encoding);
  const bom = flags.bom ?? (base.bom && unicodeEncoding(encoding) !== undefined);
  return {
    delimiter: flags.delimiter ?? base.delimiter,
    eol: flags.eol ?? base.eol,
    encoding,
    bom,
    ...(base.sep === undefined ? {} : { sep: base.sep }),
  };
}

/**
 * The columns of a run, now that the input's kind and header are known, and,
 * when a table has several checked columns, their names (`groups`: the
 * verdict columns come once for each).
 */
export function resolveColumns(
  names: readonly string[] | undefined,
  inputKind: 'csv' | 'xlsx' | 'text',
  header: readonly string[] = [],
  groups?: readonly string[],
): Columns {
  const grouped = (c: Columns): Columns => (groups !== undefined && groups.length > 1 ? withGroups(c, header, groups) : c);
  if (names === undefined) return grouped(columnsOf(ALL_COLUMNS.order, header));
  if (inputKind !== 'text') {
    if (names.includes('email')) {
      throw new UsageError('--columns: "email" is for a text input; a table keeps all its own columns, and --columns picks the verdict columns after them');
    }
    return grouped(columnsOf(['input', ...names.filter(isVerdictColumn)], header));
  }
  // The address is the row's own cell, as a table's cells are: it always comes out
  // (first, unless `email` is named where it should go); verdicts alone name no one.
  const order = names.map((n) => (n === 'email' ? 'input' : (n as VerdictColumn)));
  return columnsOf(order.includes('input') ? order : ['input', ...order], header);
}

/**
 * Several checked columns: their verdict columns are named after them, and
 * take a prefix only when one of those names is an input column's.
 */
function withGroups(c: Columns, header: readonly string[], groups: readonly string[]): Columns {
  const taken = new Set(header.map(nameKey));
  const names = (prefix: string): string[] => groupNames({ ...c, groups, prefix });
  let prefix = '';
  for (let n = 1; names(prefix).some((name) => taken.has(nameKey(name))); n++) prefix = n === 1 ? 'mailsift_' : `mailsift${n}_`;
  return { ...c, groups, prefix };
}

/** The input's column names that the appended columns' names would have shared, had they no prefix (for the notice). */
export function prefixClashes(columns: Columns, header: readonly string[]): string[] {
  if (!columns.groups) return appendedPrefix(columns.order, header).clashes;
  const ours = new Set(groupNames({ ...columns, prefix: '' }).map(nameKey));
  return header.filter((name, i) => ours.has(nameKey(name)) && header.findIndex((h) => nameKey(h) === nameKey(name)) === i);
}

function columnsOf(order: readonly ('input' | VerdictColumn)[], header: readonly string[]): Columns {
  const standard = order.length === ALL_COLUMNS.order.length && order.every((c, i) => c === ALL_COLUMNS.order[i]);
  return { order, standard, prefix: appendedPrefix(order, header).prefix };
}
