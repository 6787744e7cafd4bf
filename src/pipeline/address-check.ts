import { systemClock, type Clock } from '../time/clock.js';
import { withDeadline } from '../time/waits.js';
import { UsageError } from '../errors.js';
import { printable } from '../format.js';
import type { Input, InputRow } from '../read/input-row.js';
import { openInput, type OpenInputOptions } from '../read/open-input.js';
import { addressLike, holdsAddress } from '../read/cell-addresses.js';
import { columnLabel, shellWord } from '../read/column.js';
import { isWorkbook, surveySheets } from '../read/sheet-survey.js';
import { classifyText, isAddressLine } from '../read/sniff.js';

/** non-empty address cells looked at */
const SAMPLE_CELLS = 1000;
/** below this share of cells with an "@", the column holds no addresses */
export const ADDRESS_SHARE = 0.1;
/** an input that pauses this long is judged on what it gave (the pipeline's idle flush waits as long) */
const PAUSE_MS = 250;

export interface AddressCheckOptions {
  /** the input's name in messages */
  name: string;
  /** --sheet as given; for a workbook, which sheet was read */
  sheet?: string;
  /** --column as given: a column the user named is checked however few addresses it holds */
  column?: string;
  /** a one-line notice for stderr: a column named by --column that holds no address in its first cells */
  onNotice?: (line: string) => void;
  /** a workbook's other sheets, looked at only when the chosen one fails (see surveySheets) */
  otherSheets?: () => Promise<{ name: string; position: number; holdsAddresses: boolean }[]>;
  /** what the input's pause is timed on (the real clock by default) */
  clock?: Clock;
}

/**
 * Opens an input file (or stdin) and checks that it holds addresses: how the
 * CLI and the library's validateFile both read one, so that neither validates
 * the wrong file. A sheet without an address column names the sheets that
 * have one.
 */
export async function openAddressInput(options: OpenInputOptions & { clock?: Clock }): Promise<Input> {
  const { path } = options;
  const check: AddressCheckOptions = {
    name: path === '-' ? 'stdin' : path,
    ...(options.sheet === undefined ? {} : { sheet: options.sheet }),
    ...(options.column === undefined ? {} : { column: options.column }),
    ...(options.onNotice === undefined ? {} : { onNotice: options.onNotice }),
    ...(path === '-' ? {} : { otherSheets: () => surveySheets(path, ADDRESS_SHARE) }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  };
  const opened = await openInput(options).catch(async (err: unknown) => {
    // a sheet in which no column holds an "@": perhaps another sheet does
    if (err instanceof UsageError && err.message.startsWith('no address column found') && isWorkbook(path)) {
      const advice = await sheetAdvice(check);
      if (advice !== undefined) throw new UsageError(advice);
    }
    throw err;
  });
  return checkAddressColumn(opened, check).catch((err: unknown) => {
    opened.close();
    throw err;
  });
}

/**
 * A table whose address column holds no addresses — the wrong --column, a
 * detected column that is not one, the wrong sheet — or a text that is no
 * address list (`mailsift validate README.md`) would have every row answered
 * `invalid` and the run exit 0, some of it paid for. So before any request,
 * the first non-empty cells of the column are looked at: when fewer than a
 * tenth hold an address, the run stops (exit 2) naming the column, or the
 * sheet, that does hold addresses. A text is a list when most of its
 * non-blank lines are one address each (the rule the reader told it by from
 * its head, checked again over more lines: a pipe's first chunk may be a line
 * long). The rows looked at are then handed on first, unchanged. A column
 * the user named with --column is checked as it is, however sparse: what the
 * user named is what is checked.
 */
export async function checkAddressColumn(input: Input, o: AddressCheckOptions): Promise<Input> {
  const named = o.column !== undefined && input.kind !== 'text';
  const source = input.rows[Symbol.asyncIterator]();
  const held: InputRow[][] = [];
  let cells = 0;
  let withAt = 0;
  let ended = false;
  /** a chunk asked for while the input paused: the rows that follow start with it */
  let next: Promise<IteratorResult<InputRow[]>> | undefined;
  while (cells < SAMPLE_CELLS) {
    next ??= source.next();
    // A live feed (`tail -f`) may take hours to give 1000 cells: once it
    // pauses, what has come is the sample.
    const r = await withDeadline(o.clock ?? systemClock, next, PAUSE_MS);
    if (r === undefined) {
      if (cells > 0) break;
      continue;
    }
    next = undefined;
    if (r.done) {
      ended = true;
      break;
    }
    held.push(r.value);
    for (const row of r.value) {
      if (row.email === '' || cells >= SAMPLE_CELLS) continue;
      cells++;
      if (input.kind === 'text' ? isAddressLine(row.email) : addressLike(row.email)) withAt++;
    }
  }
  const rows = held.flat();
  const enough = input.kind === 'text' ? withAt * 2 > cells : withAt >= ADDRESS_SHARE * Math.max(cells, 1);
  if (named) {
    // what the user named is checked: a word, in case the name was a slip
    if (cells > 0 && withAt === 0) o.onNotice?.(namedButEmpty(input, rows, cells));
  } else if (rows.length > 0 && !enough) {
    throw new UsageError(await problem(input, rows, o));
  }
  async function* replay(): AsyncGenerator<InputRow[]> {
    yield* held;
    held.length = 0;
    if (ended) return;
    if (next) {
      const r = await next;
      if (r.done) return;
      yield r.value;
    }
    yield* { [Symbol.asyncIterator]: () => source };
  }
  return { ...input, rows: replay() };
}

/** What is wrong, and what to give instead when the input shows it. */
async function problem(input: Input, rows: readonly InputRow[], o: AddressCheckOptions): Promise<string> {
  if (input.kind === 'text') {
    const shape = classifyText(rows.map((r) => r.fields[0]).join('\n'), true);
    return `${o.name} looks like ${shape.kind === 'other' ? shape.what : 'prose or a document, not a list (a list has one address a line)'}`;
  }
  const here = `column ${quoted(input.header[input.emailColumn] ?? String(input.emailColumn + 1))}`;
  const better = bestColumn(input, rows);
  if (better !== undefined) {
    return `${here} holds no addresses; column ${quoted(input.header[better]!)} does: use --column ${columnArg(input.header, better)}`;
  }
  const sheets = input.kind === 'xlsx' ? await sheetAdvice(o) : undefined;
  if (sheets !== undefined) return sheets;
  return (
    `${here} of ${o.name} holds no addresses (fewer than 1 in 10 of its cells hold one); name the address column with --column ` +
    `(--column ${columnArg(input.header, input.emailColumn)} checks it as it is)`
  );
}

/** The notice for a column --column named that holds no address in the cells looked at. */
function namedButEmpty(input: Input, rows: readonly InputRow[], cells: number): string {
  const better = bestColumn(input, rows);
  return (
    `${columnLabel(input.header, input.emailColumn)} holds no address in its first ${cells === 1 ? 'cell' : `${cells} cells`}; ` +
    `checking it anyway, as --column says${better === undefined ? '' : ` (${columnLabel(input.header, better)} holds addresses)`}`
  );
}

/**
 * For a workbook whose chosen sheet holds no addresses: which sheets do, as
 * the message to give, or undefined when none does (or it cannot be told).
 */
export async function sheetAdvice(o: AddressCheckOptions): Promise<string | undefined> {
  if (!o.otherSheets) return undefined;
  const sheets = await o.otherSheets().catch(() => []);
  const current = sheets.find((s) => (o.sheet === undefined ? s.position === 1 : s.name === o.sheet || String(s.position) === o.sheet));
  const good = sheets.filter((s) => s.holdsAddresses && s !== current);
  if (good.length === 0) return undefined;
  const sheet = current ? `sheet ${quoted(current.name)}` : 'the sheet read';
  const names = good.map((s) => quoted(s.name)).join(', ');
  const first = good[0]!;
  // a name with control characters is not one to retype: its number is
  const arg = printable(first.name) === first.name ? shellWord(first.name) : String(first.position);
  return `${sheet} holds no addresses; ${good.length === 1 ? `sheet ${names} does` : `sheets ${names} do`}: use --sheet ${arg}`;
}

/** The column with the most cells that contain "@", if enough of its cells do. */
function bestColumn(input: Input, rows: readonly InputRow[]): number | undefined {
  let best: number | undefined;
  let bestCount = 0;
  for (let col = 0; col < input.header.length; col++) {
    if (col === input.emailColumn) continue;
    let cells = 0;
    let withAt = 0;
    for (const row of rows) {
      const cell = row.fields[col]?.trim() ?? '';
      if (cell === '' || cells >= SAMPLE_CELLS) continue;
      cells++;
      if (holdsAddress(cell)) withAt++;
    }
    if (withAt > bestCount && withAt >= ADDRESS_SHARE * cells) {
      best = col;
      bestCount = withAt;
    }
  }
  return best;
}

/** How to name column `i` to --column: its header when that finds it, else its number. */
function columnArg(header: readonly string[], i: number): string {
  const name = header[i]!;
  // a headerless table's made-up names (column3) are not names --column finds
  const usable = name !== '' && name !== `column${i + 1}` && header.indexOf(name) === i && !/^\d+$/.test(name);
  return usable ? shellWord(name) : String(i + 1);
}

const quoted = (s: string): string => printable(JSON.stringify(s));
