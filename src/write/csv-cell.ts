const PLAIN_NUMBER = /^[+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One CSV cell, quoted when needed and otherwise exactly as given: an input cell comes out as it was read. */
export function csvCell(value: string): string {
  return NEEDS_QUOTES.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/**
 * One CSV cell, defused: a cell that a spreadsheet would execute (starting with
 * = + - @ tab or CR) gets a leading `'`. For the cells mailsift appends with
 * text from elsewhere (an API's provider, domain, suggestion, error code), and
 * for input cells only when asked (--escape-formulas): a phone number
 * `+1 555 0100` must survive a round trip into a CRM. Plain numbers such as
 * `-5` are left alone.
 */
export function defusedCsvCell(value: string): string {
  const c = value.charCodeAt(0);
  // = + - @ tab CR
  const risky = (c === 61 || c === 43 || c === 45 || c === 64 || c === 9 || c === 13) && !PLAIN_NUMBER.test(value);
  return csvCell(risky ? `'${value}` : value);
}
