const PLAIN_NUMBER = /^[+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** How one CSV cell is written, in a file of a given delimiter. */
export type CsvCell = (value: string) => string;

const cells = new Map<string, { plain: CsvCell; defused: CsvCell }>();

/**
 * The cell writers of a delimiter: a cell is quoted when it holds the
 * delimiter, a quote or a line break, and otherwise written exactly as given
 * (an input cell comes out as it was read). `defused` is the same for the
 * cells mailsift appends with text from elsewhere (see defusedCsvCell).
 */
export function cellWriters(delimiter: string): { plain: CsvCell; defused: CsvCell } {
  let writers = cells.get(delimiter);
  if (writers === undefined) {
    const needsQuotes = new RegExp(`["\\r\\n${delimiter.replace(/[\\\]^-]/g, '\\$&')}]`);
    const plain: CsvCell = (value) => (needsQuotes.test(value) ? `"${value.replaceAll('"', '""')}"` : value);
    const defused: CsvCell = (value) => plain(risky(value) ? `'${value}` : value);
    writers = { plain, defused };
    cells.set(delimiter, writers);
  }
  return writers;
}

/** One cell of a comma-separated file, quoted when needed and otherwise exactly as given. */
export const csvCell: CsvCell = cellWriters(',').plain;

/**
 * One CSV cell, defused: a cell that a spreadsheet would execute (starting with
 * = + - @ tab or CR) gets a leading `'`. For the cells mailsift appends with
 * text from elsewhere (an API's provider, domain, suggestion, error code), and
 * for input cells only when asked (--escape-formulas): a phone number
 * `+1 555 0100` must survive a round trip into a CRM. Plain numbers such as
 * `-5` are left alone.
 */
export const defusedCsvCell: CsvCell = cellWriters(',').defused;

function risky(value: string): boolean {
  const c = value.charCodeAt(0);
  // = + - @ tab CR
  return (c === 61 || c === 43 || c === 45 || c === 64 || c === 9 || c === 13) && !PLAIN_NUMBER.test(value);
}
