/** The candidate CSV delimiters, in order of preference on a tie. */
const DELIMITERS = [',', ';', '\t'] as const;
export type Delimiter = (typeof DELIMITERS)[number];

/** The first line of `head`, ignoring newlines inside quoted fields. */
export function firstRecord(head: string): string {
  let quoted = false;
  for (let i = 0; i < head.length; i++) {
    const c = head[i];
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === '\n' || c === '\r')) return head.slice(0, i);
  }
  return head;
}

/** The delimiter used most often (outside quotes) in the first record; `,` by default. */
export function detectDelimiter(head: string): Delimiter {
  const line = firstRecord(head);
  const counts = new Map<Delimiter, number>(DELIMITERS.map((d) => [d, 0]));
  let quoted = false;
  for (const c of line) {
    if (c === '"') quoted = !quoted;
    else if (!quoted && counts.has(c as Delimiter)) counts.set(c as Delimiter, counts.get(c as Delimiter)! + 1);
  }
  let best: Delimiter = ',';
  for (const d of DELIMITERS) if (counts.get(d)! > counts.get(best)!) best = d;
  return best;
}

/**
 * Whether piped content is CSV: its first record holds a delimiter outside
 * quotes. A list of bare addresses (one per line) holds none.
 */
export function looksLikeCsv(head: string): boolean {
  const line = firstRecord(head);
  let quoted = false;
  for (const c of line) {
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === ',' || c === ';' || c === '\t')) return true;
  }
  return false;
}
