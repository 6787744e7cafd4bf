const PLAIN_NUMBER = /^[+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One CSV cell, quoted when needed and defused: a cell that a spreadsheet would
 * execute gets a leading `'`. Plain numbers such as `-5` are left alone.
 */
export function csvCell(value: string): string {
  let v = value;
  const c = v.charCodeAt(0);
  // = + - @ tab CR
  if ((c === 61 || c === 43 || c === 45 || c === 64 || c === 9 || c === 13) && !PLAIN_NUMBER.test(v)) v = `'${v}`;
  return NEEDS_QUOTES.test(v) ? `"${v.replaceAll('"', '""')}"` : v;
}
