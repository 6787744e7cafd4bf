/** The candidate CSV delimiters, in order of preference on a tie. */
const DELIMITERS = [',', ';', '\t'] as const;
type Delimiter = (typeof DELIMITERS)[number];

/** The first line of `head`, ignoring newlines inside quoted fields. */
function firstRecord(head: string): string {
  let quoted = false;
  for (let i = 0; i < head.length; i++) {
    const c = head[i];
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === '\n' || c === '\r')) return head.slice(0, i);
  }
  return head;
}

/** How often each delimiter appears outside quotes in the first record. */
function delimiterCounts(head: string): Record<Delimiter, number> {
  const counts = { ',': 0, ';': 0, '\t': 0 };
  let quoted = false;
  for (const c of firstRecord(head)) {
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === ',' || c === ';' || c === '\t')) counts[c]++;
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
