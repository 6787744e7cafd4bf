import type { Eol } from '../dialect.js';
import { addressList } from './cell-addresses.js';

/** The candidate CSV delimiters, in order of preference on a tie. */
const DELIMITERS = [',', ';', '\t'] as const;
type Delimiter = (typeof DELIMITERS)[number];
type Counts = Record<Delimiter, number>;

/** Records looked at to tell a table by its content. */
const SAMPLE_RECORDS = 100;
/** Lines looked at to tell a list, or what else a text is. */
const SAMPLE_LINES = 1000;

/**
 * The first records of `head` (a quoted field may hold line breaks; CRLF, LF
 * and CR each end a record outside quotes), as how often each delimiter
 * appears in each outside quotes. Blank records are left out. The record cut
 * off by the end of `head` is left out unless `complete` (no more text follows).
 */
function recordCounts(head: string, max: number, complete: boolean): Counts[] {
  const records: Counts[] = [];
  let counts: Counts = { ',': 0, ';': 0, '\t': 0 };
  let blank = true;
  let quoted = false;
  for (let i = 0; i < head.length && records.length < max; i++) {
    const c = head[i]!;
    if (c === '"') quoted = !quoted;
    else if (quoted) continue;
    else if (c === '\n' || c === '\r') {
      if (c === '\r' && head[i + 1] === '\n') i++;
      if (!blank) records.push(counts);
      counts = { ',': 0, ';': 0, '\t': 0 };
      blank = true;
      continue;
    } else if (c === ',' || c === ';' || c === '\t') counts[c]++;
    if (c !== ' ') blank = false;
  }
  if (complete && !blank && records.length < max) records.push(counts);
  return records;
}

/**
 * The delimiter used most often (outside quotes) in the first record, `,` by
 * default — unless another one of the first record splits more of the first
 * records into a cell that holds an address. A header may hold a delimiter
 * inside its names: German exports head a `;` table with `Name, Vorname`, as
 * many commas as semicolons, and Excel's "Text (Tab delimited)" a `Last,
 * First` column; counting alone split them at the commas, and every row's
 * "address" was `anna@x.de;Müller` (or no address column was found at all).
 */
export function detectDelimiter(head: string): Delimiter {
  const counts = recordCounts(head, 1, true)[0] ?? { ',': 0, ';': 0, '\t': 0 };
  let best: Delimiter = ',';
  for (const d of DELIMITERS) if (counts[d] > counts[best]) best = d;
  const others = DELIMITERS.filter((d) => d !== best && counts[d] > 0);
  if (others.length === 0) return best;
  let most = rowsWithAddress(head, best);
  for (const d of others) {
    const n = rowsWithAddress(head, d);
    if (n > most) [best, most] = [d, n];
  }
  return best;
}

/**
 * How many of the first records, split at `delimiter` (RFC 4180 quotes), have
 * a cell that holds addresses and nothing else, and no more cells than the
 * first record (a split inside the names of a name-addr widens the row).
 */
function rowsWithAddress(head: string, delimiter: string): number {
  let rows = 0;
  let records = 0;
  let found = false;
  let cells = 0;
  let width = 0;
  let cell = '';
  let quoted = false;
  const end = (): void => {
    cells++;
    if (!found) {
      // one address, or a list of them: `anna@x.de;Müller` is neither
      const addresses = addressList(cell);
      found = addresses.length > 0 && addresses.every(isAddressLine);
    }
    cell = '';
  };
  for (let i = 0; i < head.length && records < SAMPLE_RECORDS; i++) {
    const c = head[i]!;
    if (quoted) {
      if (c !== '"') cell += c;
      else if (head[i + 1] === '"') cell += head[++i];
      else quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === delimiter) end();
    else if (c === '\n' || c === '\r') {
      if (c === '\r' && head[i + 1] === '\n') i++;
      end();
      if (records === 0) width = cells;
      if (found && cells <= width) rows++;
      found = false;
      cells = 0;
      records++;
    } else cell += c;
  }
  return rows;
}

/** The line ending of the first line (outside quotes): what a CSV output ends its lines with. LF when there is none. */
export function lineEnding(head: string): Eol {
  let quoted = false;
  for (let i = 0; i < head.length; i++) {
    const c = head[i]!;
    if (c === '"') quoted = !quoted;
    else if (!quoted && c === '\n') return '\n';
    else if (!quoted && c === '\r') return head[i + 1] === '\n' ? '\r\n' : '\r';
  }
  return '\n';
}

/** Excel's first line `sep=;`: any one character is the file's delimiter. */
const SEP_LINE = /^(sep=)([^\r\n])(\r\n|\n|\r|$)/i;

/**
 * Excel's `sep=X` first line: its prefix as spelled (`sep=`), the delimiter it
 * names and the length of the line with its line ending; undefined when the
 * text does not start with one.
 */
export function sepLine(head: string): { prefix: string; delimiter: string; length: number } | undefined {
  const m = SEP_LINE.exec(head);
  return m ? { prefix: m[1]!, delimiter: m[2]!, length: m[0].length } : undefined;
}

/** One address the way lists hold it: a bare address, a name-addr (`Jane <jane@x.com>`) or a `mailto:` URI. */
const BARE = /^(?:mailto:)?[^\s,;<>()"@]+@[^\s,;<>()"@]+$/i;
const NAME_ADDR = /^[^<>@]*<\s*(?:mailto:)?[^\s<>@]+@[^\s<>@]+\s*>$/i;
/** a quoted local part may hold spaces and commas (`"john,smith"@example.com`) */
const QUOTED = /^"[^"\r\n]*"@[^\s,;<>()"@]+$/;
/** An address anywhere in a line (prose, a header): to say how many lines hold one. */
const ANY_ADDRESS = /[^\s,;<>()"':@]+@[^\s,;<>()"':@]+\.[a-z]/i;
/** The header line a bare list may keep (`cut -f3 users.csv`). */
export const LIST_HEADER = /^\s*e[-_ ]?mail([-_ ]?address)?\s*$/i;

/** Whether a line of a text is one address, as a list holds them (surrounding spaces aside). */
export function isAddressLine(line: string): boolean {
  const t = line.trim();
  return BARE.test(t) || NAME_ADDR.test(t) || QUOTED.test(t);
}

/** What a text is: a table (with its delimiter), a list of addresses, or something else, named. */
export type TextShape = { kind: 'table'; delimiter: string } | { kind: 'list' } | { kind: 'other'; what: string };

/**
 * What a text is, told by its content whatever its name: a delimited table
 * (Excel's "Text (Tab delimited)" and "Unicode Text" are saved as `.txt`), a
 * list of addresses (most non-blank lines one address), or something else —
 * named as what it looks like (a vCard, NDJSON, a saved email's headers,
 * prose) for the one-line refusal. `head` is the start of the text; `complete`
 * when it is all of it.
 */
export function classifyText(head: string, complete: boolean): TextShape {
  const sep = sepLine(head);
  if (sep) return { kind: 'table', delimiter: sep.delimiter };
  const lines = sampleLines(head, complete);
  const known = knownKind(lines);
  if (known !== undefined) return { kind: 'other', what: known };
  // a head of one unended line (a pipe's first bytes, or a file without line breaks) is judged as it is;
  // the reader and the address check see more
  const unended = !complete && !/[\r\n]/.test(head);
  const delimiter = tableDelimiter(head, complete || unended);
  if (delimiter !== undefined) return { kind: 'table', delimiter };
  if (unended) return { kind: 'list' };
  const body = lines.length > 1 && LIST_HEADER.test(lines[0]!) ? lines.slice(1) : lines;
  const addresses = body.filter(isAddressLine).length;
  if (addresses * 2 > body.length) return { kind: 'list' };
  const holding = lines.filter((l) => ANY_ADDRESS.test(l)).length;
  const where = `${holding} of its ${lines.length === SAMPLE_LINES ? `first ${lines.length}` : lines.length} non-blank line${lines.length === 1 ? '' : 's'} ${holding === 1 ? 'holds' : 'hold'} an address`;
  return { kind: 'other', what: `prose or a document, not a list (${where}; a list has one address a line)` };
}

/** The non-blank lines at the head of a text, the one cut off by its end left out. */
function sampleLines(head: string, complete: boolean): string[] {
  const all = head.split(/\r\n|\n|\r/);
  // the last piece is cut off unless the text ends there; a head of one unended line is all there is
  if (!complete && all.length > 1) all.pop();
  const lines: string[] = [];
  for (const line of all) {
    if (line.trim() === '') continue;
    lines.push(line);
    if (lines.length === SAMPLE_LINES) break;
  }
  return lines;
}

/** A delimited table's delimiter: the first record has one, and at least half the records below have as many. */
function tableDelimiter(head: string, complete: boolean): string | undefined {
  const records = recordCounts(head, SAMPLE_RECORDS, complete);
  const first = records[0];
  if (!first) return undefined;
  const d = detectDelimiter(head);
  const width = first[d];
  if (width === 0) return undefined;
  const rest = records.slice(1);
  // (Excel leaves out the trailing delimiters of some rows: the others have the header's count)
  const alike = rest.filter((r) => r[d] === width).length;
  return rest.length === 0 || alike * 2 >= rest.length ? d : undefined;
}

const MAIL_HEADERS =
  /^(from|to|cc|subject|date|received|return-path|message-id|mime-version|delivered-to|reply-to|x-[a-z0-9-]+|content-type|dkim-signature|authentication-results|arc-[a-z-]+):/i;

/**
 * What a text that is no list or table plainly is, from its first lines:
 * undefined when it is none of these.
 */
function knownKind(lines: readonly string[]): string | undefined {
  const first = lines[0]?.trim() ?? '';
  if (/^BEGIN:VCARD\b/i.test(first)) return 'a vCard file (.vcf), not a list: export the contacts as CSV';
  if (/^BEGIN:VCALENDAR\b/i.test(first)) return 'an iCalendar file (.ics), not a list of addresses';
  if (/^<!doctype html|^<html[\s>]/i.test(first)) return 'an HTML page, not a list of addresses';
  if (/^<\?xml\b/i.test(first)) return 'an XML document, not a list of addresses';
  if (/^From \S+ /.test(first)) return 'a mailbox file (mbox), not a list of addresses';
  if (/^dn:/i.test(first) && lines.some((l) => /^objectclass:/i.test(l))) return 'an LDIF directory export, not a list of addresses';
  if (/^[{[]\s*(["{[]|$)/.test(first) || parsesAsJson(first)) {
    const objects = lines.slice(0, 20).filter((l) => parsesAsJson(l.trim()));
    if (objects.length >= 2 || (lines.length === 1 && objects.length === 1)) {
      return `NDJSON (a JSON value a line), not a list of addresses: take the addresses out first (jq -r '.email')`;
    }
    return `a JSON document, not a list of addresses: take the addresses out first (jq -r '.[].email')`;
  }
  // a saved email: its header block, one "Name: value" a line (folded lines start with white space)
  const top = lines.slice(0, 12).filter((l) => !/^\s/.test(l));
  const headers = top.filter((l) => /^[A-Za-z][A-Za-z0-9-]*:[ \t]/.test(l) || /^[A-Za-z][A-Za-z0-9-]*:$/.test(l));
  if (headers.length * 2 > top.length && headers.filter((l) => MAIL_HEADERS.test(l)).length >= 2 && /^[A-Za-z][A-Za-z0-9-]*:/.test(first)) {
    return "a saved email (a mail's header block), not a list of addresses";
  }
  return undefined;
}

function parsesAsJson(line: string): boolean {
  if (!line.startsWith('{') && !line.startsWith('[')) return false;
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}
