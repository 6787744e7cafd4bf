import { UsageError } from '../errors.js';

/**
 * The one rule CSV and sheets follow so that output row N is input row N and
 * no verdict lands under another column's header: a blank row comes out in
 * place (its cells empty), a short row is padded with empty cells, and the
 * table is as wide as its widest row — the header widened with column letters —
 * or the file is refused naming the row that is wider.
 */

/** Blank rows held at most while waiting to see whether they are the file's last: past this they are let through. */
const HELD_BLANKS = 4096;

/** A row without a non-empty cell (a blank line in a CSV, a missing or styled empty row in a sheet). */
export const isBlankRecord = (cells: readonly string[]): boolean => cells.every((c) => c === '');

/**
 * The chunks of `source`, with blank items at the very end left out (an
 * editor's trailing newlines, a sheet's styled rows below the data): a blank
 * item is held until a non-blank one follows, which takes it along in place.
 */
export async function* withoutTrailingBlanks<T>(source: AsyncIterable<T[]>, blank: (item: T) => boolean): AsyncGenerator<T[]> {
  let held: T[] = [];
  for await (const chunk of source) {
    let last = chunk.length - 1;
    while (last >= 0 && blank(chunk[last]!)) last--;
    if (last < 0) {
      held = held.concat(chunk);
      if (held.length < HELD_BLANKS) continue;
      // a long run of blank rows is let through rather than held
      yield held;
      held = [];
      continue;
    }
    // (the common chunk, ending in a row with text and nothing held, is handed on as it is)
    const out = last === chunk.length - 1 ? chunk : chunk.slice(0, last + 1);
    const before = held;
    held = last === chunk.length - 1 ? [] : chunk.slice(last + 1);
    yield before.length ? before.concat(out) : out;
  }
}

/** How many cells a row really has: empty cells after its last non-empty one do not count. */
export function usedWidth(cells: readonly string[]): number {
  let n = cells.length;
  while (n > 0 && cells[n - 1] === '') n--;
  return n;
}

/** A column's letters, as a spreadsheet names it: 0 → A, 25 → Z, 26 → AA. */
export function columnLetters(index: number): string {
  let name = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}

/** The header as wide as the table: a column past its end is named by its letters (`D`), or `columnN` in a table without a header. */
export function widenHeader(header: string[], width: number, headerless: boolean): string[] {
  const wide = header.slice();
  for (let i = wide.length; i < width; i++) wide.push(headerless ? `column${i + 1}` : columnLetters(i));
  return wide;
}

/**
 * A row as wide as the table: padded with empty cells, or with its empty
 * cells past the width dropped (they hold nothing to keep); undefined when it
 * holds a cell past the width (see tooWide).
 */
export function fitRow(cells: string[], width: number): string[] | undefined {
  if (cells.length === width) return cells;
  if (cells.length < width) {
    const padded = cells.slice();
    while (padded.length < width) padded.push('');
    return padded;
  }
  return usedWidth(cells) > width ? undefined : cells.slice(0, width);
}

/**
 * A row with a cell past the width the table was given from its header and
 * first rows — which was written out before this row was read: exit 2 naming it.
 */
export function tooWide(where: string, cells: readonly string[], width: number): UsageError {
  const used = usedWidth(cells);
  return new UsageError(
    `${where} has a cell in column ${columnLetters(used - 1)} (${used}), past the ${width} columns of the header and the first rows: ` +
      'the verdicts would land under its data; give that column a header (or delete the stray cells) and run again',
  );
}
