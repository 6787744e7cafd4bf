/** The candidate CSV delimiters, in order of preference on a tie. */
const DELIMITERS = [',', ';', '\t'] as const;
type Delimiter = (typeof DELIMITERS)[number];

/** How often each delimiter appears outside quotes in the first record (a quoted field may hold newlines). */
function delimiterCounts(head: string): Record<Delimiter, number> {
  const counts = { ',': 0, ';': 0, '\t': 0 };
  let quoted = false;
  for (const c of head) {
    if (c === '"') quoted = !quoted;
    else if (quoted) continue;
    else if (c === '\n' || c === '\r') break;
    else if (c === ',' || c === ';' || c === '\t') counts[c]++;
  }
  return counts;
}

/** The delimiter used most often (outside quotes) in the first record; `,` by default. */
export function detectDelimiter(head: string): Delimiter {
  const counts = delimiterCounts(head);
  let best: Delimiter = ',';
  for (const d of DELIMITERS) if (counts[d] > counts[best]) best = d;
  return best;
}

/**
 * Whether piped content is CSV: its first record holds a delimiter outside
 * quotes. A list of bare addresses (one per line) holds none.
 */
export function looksLikeCsv(head: string): boolean {
  const counts = delimiterCounts(head);
  return DELIMITERS.some((d) => counts[d] > 0);
}
