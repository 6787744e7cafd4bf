/** Characters that make a spreadsheet read a cell as a formula (OWASP "CSV injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^[+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One CSV cell, quoted when needed and defused: a cell that a spreadsheet would
 * execute gets a leading `'`. Plain numbers such as `-5` are left alone.
 */
export function csvCell(value: string): string {
  let v = value;
  if (FORMULA_START.test(v) && !PLAIN_NUMBER.test(v)) v = `'${v}`;
  return NEEDS_QUOTES.test(v) ? `"${v.replaceAll('"', '""')}"` : v;
}
