import { UsageError } from '../errors.js';

/** Header names that mean "the address is here", compared case-insensitively. */
const EMAIL_HEADER = /^\s*(e[-_ ]?mail|mail)([-_ ]?(address|addr))?\s*$/i;

/**
 * Which column holds the address. `--column` wins (a 1-based number or a header
 * name); else a header named like `email`; else the column of the sample rows
 * whose cells most often contain an `@` (first one on a tie).
 */
export function detectEmailColumn(
  header: readonly string[],
  sample: readonly (readonly string[])[],
  requested?: string,
): number {
  if (requested !== undefined) return requestedColumn(header, requested);
  const named = header.findIndex((name) => EMAIL_HEADER.test(name));
  if (named >= 0) return named;
  let best = -1;
  let bestCount = 0;
  for (let col = 0; col < header.length; col++) {
    let count = 0;
    for (const row of sample) if (row[col]?.includes('@')) count++;
    if (count > bestCount) {
      best = col;
      bestCount = count;
    }
  }
  if (best < 0) {
    throw new UsageError(
      `no address column found (looked for a header like "email" and for cells with "@"); name it with --column`,
    );
  }
  return best;
}

function requestedColumn(header: readonly string[], requested: string): number {
  if (/^\d+$/.test(requested)) {
    const n = Number(requested);
    if (n < 1 || n > header.length) {
      throw new UsageError(`--column ${requested}: the input has ${header.length} column(s)`);
    }
    return n - 1;
  }
  const exact = header.indexOf(requested);
  if (exact >= 0) return exact;
  const lower = requested.toLowerCase();
  const loose = header.findIndex((name) => name.trim().toLowerCase() === lower);
  if (loose >= 0) return loose;
  throw new UsageError(`--column "${requested}": no such column (columns: ${header.join(', ')})`);
}

/**
 * A first row that holds an address is data, not a header: some exports have
 * none. We then name the columns ourselves.
 */
export function looksHeaderless(firstRow: readonly string[]): boolean {
  return firstRow.some((cell) => /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(cell.trim())) &&
    !firstRow.some((cell) => EMAIL_HEADER.test(cell));
}
