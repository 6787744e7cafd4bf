import { isUtf8 } from 'node:buffer';
import { decoderFor, encodingKey } from '../dialect.js';
import { UsageError } from '../errors.js';

/**
 * The longest line (text input) or record (CSV) read, in characters. A real
 * address line is a few hundred bytes; without a cap, a 50 MB file with no
 * newline would be held whole and echoed as one row.
 */
export const MAX_LINE = 1024 * 1024;

type Unicode = 'utf-8' | 'utf-16le' | 'utf-16be' | 'utf-32le' | 'utf-32be';

/** Byte-order marks we decode by; anything else is sniffed (`sniffUnicode`), else UTF-8 unless `--encoding` says otherwise. */
function bomEncoding(head: Buffer): { encoding: Unicode; length: number } | undefined {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return { encoding: 'utf-8', length: 3 };
  // before UTF-16: FF FE 00 00 is the UTF-32 LE mark (a UTF-16 text does not start with U+0000)
  if (head[0] === 0xff && head[1] === 0xfe && head[2] === 0 && head[3] === 0) return { encoding: 'utf-32le', length: 4 };
  if (head[0] === 0 && head[1] === 0 && head[2] === 0xfe && head[3] === 0xff) return { encoding: 'utf-32be', length: 4 };
  if (head[0] === 0xff && head[1] === 0xfe) return { encoding: 'utf-16le', length: 2 };
  if (head[0] === 0xfe && head[1] === 0xff) return { encoding: 'utf-16be', length: 2 };
  return undefined;
}

/**
 * UTF-16 or UTF-32 without a byte-order mark (some Windows exports), told by
 * where the zero bytes fall in the head: an address list is mostly ASCII, whose
 * characters are one byte and one (UTF-16) or three (UTF-32) zeros. UTF-8 text
 * has no zero bytes at all.
 */
export function sniffUnicode(head: Buffer): Unicode | undefined {
  const n = Math.min(head.length, 4096) & ~3;
  if (n < 4 || head.subarray(0, n).indexOf(0) < 0) return undefined;
  const zeros = [0, 0, 0, 0];
  for (let i = 0; i < n; i++) if (head[i] === 0) zeros[i & 3]!++;
  const quads = n / 4;
  const most = (k: number): boolean => zeros[k]! >= quads * 0.6;
  const few = (k: number): boolean => zeros[k]! <= quads * 0.1;
  if (most(1) && most(2) && most(3) && few(0)) return 'utf-32le';
  if (most(0) && most(1) && most(2) && few(3)) return 'utf-32be';
  const even = zeros[0]! + zeros[2]!;
  const odd = zeros[1]! + zeros[3]!;
  const pairs = n / 2;
  if (odd >= pairs * 0.3 && even <= pairs * 0.05) return 'utf-16le';
  if (even >= pairs * 0.3 && odd <= pairs * 0.05) return 'utf-16be';
  // Text mostly in a script of its own (Chinese names and street addresses: no zero byte
  // in their units) has zeros only for its ASCII — commas, line ends, the addresses —, all on
  // one side of each unit. Taken as UTF-16 when, read so, the head is text.
  if (odd >= 4 && even === 0 && isText(head.subarray(0, n), 'utf-16le')) return 'utf-16le';
  if (even >= 4 && odd === 0 && isText(head.subarray(0, n), 'utf-16be')) return 'utf-16be';
  return undefined;
}

/** Whether `bytes` decode as `encoding` without an error, to text without control characters but tab, CR and LF. */
function isText(bytes: Buffer, encoding: 'utf-16le' | 'utf-16be'): boolean {
  let text: string;
  try {
    // a unit cut off at the end of the head is no error
    text = new TextDecoder(encoding, { fatal: true }).decode(bytes, { stream: true });
  } catch {
    return false;
  }
  return !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text);
}

const STRICT_UTF16: Record<string, 'utf-16le' | 'utf-16be' | undefined> = { utf16le: 'utf-16le', utf16be: 'utf-16be' };

/** What a text turned out to be written in: the output is written in it again. */
export interface DecodedAs {
  /** `utf-8`, `utf-16le`, `utf-16be`, `utf-32le`, `utf-32be`, or the --encoding name */
  encoding: string;
  /** it started with a byte-order mark */
  bom: boolean;
}

/**
 * Decodes a byte stream to text: by its BOM (UTF-8, Excel's "Unicode text"
 * UTF-16 LE/BE), else `encoding` (any iconv-lite name: latin1, windows-1252,
 * ...), else strict UTF-8. Invalid UTF-8 is an input error naming its byte
 * offset, never silently replaced by U+FFFD: that would change addresses.
 * `found` is told the encoding and whether a BOM came first, once the first
 * bytes are read.
 */
export async function* decodeBytes(source: AsyncIterable<Buffer>, name: string, encoding?: string, found?: DecodedAs): AsyncGenerator<string> {
  // A BOM split across chunks is possible only with tiny chunks (a pipe); read on a little.
  const { head, rest } = await readHead(source, 4);
  if (head.length === 0) return;
  const bom = bomEncoding(head);
  const body = prepend(bom ? head.subarray(bom.length) : head, rest);
  const sniffed = bom || encoding !== undefined ? undefined : sniffUnicode(head);
  // UTF-16 named by --encoding is read as strictly as when told by a BOM: iconv-lite would replace a bad unit
  const named = bom || encoding === undefined ? undefined : STRICT_UTF16[encodingKey(encoding)];
  const unicode = bom?.encoding ?? sniffed ?? named;
  const how = bom ? 'the file starts with its byte-order mark' : named ? `--encoding ${encoding}` : 'told by its zero bytes; or give --encoding';
  const legacy = unicode === undefined && encoding !== undefined && encodingKey(encoding) !== 'utf8';
  if (found) {
    found.encoding = unicode ?? (legacy ? encoding! : 'utf-8');
    found.bom = bom !== undefined;
  }
  if (unicode === 'utf-16le' || unicode === 'utf-16be') {
    yield* decodeStrict(body, name, unicode, bom?.length ?? 0, how);
  } else if (unicode === 'utf-32le' || unicode === 'utf-32be') {
    // TextDecoder knows no UTF-32; iconv-lite does (a rare export: Notepad++ and some databases)
    yield* decodeLegacy(body, unicode);
  } else if (legacy) {
    // (--encoding utf-8 stays strict: iconv-lite would replace bad bytes silently)
    yield* decodeLegacy(body, encoding!);
  } else {
    yield* decodeStrict(body, name, 'utf-8', bom?.length ?? 0, how);
  }
}

/**
 * The first bytes of a stream, at least `min` of them unless it is shorter (a
 * pipe may hand them over a few at a time), to sniff its kind by; and the rest.
 */
export async function readHead(source: AsyncIterable<Buffer>, min: number): Promise<{ head: Buffer; rest: AsyncIterable<Buffer> }> {
  const it = source[Symbol.asyncIterator]();
  const taken: Buffer[] = [];
  let length = 0;
  while (length < min) {
    const r = await it.next();
    if (r.done) break;
    taken.push(r.value);
    length += r.value.length;
  }
  return { head: taken.length === 1 ? taken[0]! : Buffer.concat(taken), rest: { [Symbol.asyncIterator]: () => it } };
}

export async function* prepend(first: Buffer, rest: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  if (first.length) yield first;
  yield* rest;
}

async function* decodeStrict(
  source: AsyncIterable<Buffer>,
  name: string,
  encoding: 'utf-8' | 'utf-16le' | 'utf-16be',
  startOffset: number,
  how: string,
): AsyncGenerator<string> {
  const decoder = new TextDecoder(encoding, { fatal: true });
  let offset = startOffset;
  /** the unfinished sequence at the end of the previous chunk, which the decoder holds */
  let tail: Buffer = Buffer.alloc(0);
  let chunk: Buffer | undefined;
  try {
    let first = true;
    for await (chunk of source) {
      // Valid UTF-8 (which isUtf8 says only of a chunk that ends where a
      // character does), with nothing held from before, reads the same without
      // the decoder: simdutf checks it and toString copies it (1M addresses,
      // 40 MB: 10-15 ms against 50 ms). The first chunk goes to the decoder,
      // which drops a BOM only there.
      const text = encoding === 'utf-8' && !first && tail.length === 0 && isUtf8(chunk) ? chunk.toString('utf8') : decoder.decode(chunk, { stream: true });
      first = false;
      offset += chunk.length;
      tail = encoding === 'utf-8' ? chunk.subarray(chunk.length - incompleteTail(chunk)) : heldUtf16(tail, chunk, encoding === 'utf-16le');
      if (text) yield text;
    }
    chunk = undefined;
    const end = decoder.decode();
    if (end) yield end;
  } catch (err) {
    if (!(err instanceof TypeError && (err as { code?: string }).code === 'ERR_ENCODING_INVALID_ENCODED_DATA')) throw err;
    if (encoding !== 'utf-8') {
      // the failing chunk had not been counted yet; the bytes the decoder held came before it
      const at = chunk === undefined ? offset - tail.length : offset - tail.length + firstInvalidUtf16(Buffer.concat([tail, chunk]), encoding === 'utf-16le');
      throw new UsageError(`${name}: invalid ${encoding.toUpperCase()} at byte ${at}: a half of a surrogate pair alone (${how})`);
    }
    // Within the failing chunk (and the sequence the previous one left unfinished),
    // or, at the end of the input, that unfinished sequence itself.
    const at =
      chunk === undefined
        ? offset - tail.length
        : offset - tail.length + Math.min(firstInvalidUtf8(Buffer.concat([tail, chunk])), tail.length + chunk.length - 1);
    throw new UsageError(
      `${name}: invalid UTF-8 at byte ${at}; for a legacy export give its encoding (--encoding windows-1252, latin1, ...), or save it as UTF-8`,
    );
  }
}

/** Non-UTF-8 text (see decoderFor): every byte sequence decodes, so nothing fails here. */
async function* decodeLegacy(source: AsyncIterable<Buffer>, encoding: string): AsyncGenerator<string> {
  const decoder = await decoderFor(encoding);
  for await (const chunk of source) {
    const text = decoder.write(chunk);
    if (text) yield text;
  }
  const end = decoder.end();
  if (end) yield end;
}

/** Whether iconv-lite knows an encoding name (for the flag's check before anything runs). */
export async function knownEncoding(encoding: string): Promise<boolean> {
  const iconv = (await import('iconv-lite')).default;
  return iconv.encodingExists(encoding);
}

/**
 * Offset of the first invalid UTF-8 sequence in `bytes` (which starts at a
 * sequence boundary), or its length when there is none. An incomplete sequence
 * at the very end is not counted: more bytes may follow.
 */
export function firstInvalidUtf8(bytes: Buffer): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    const need = b < 0x80 ? 0 : b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : -1;
    if (need < 0) return i;
    let j = 1;
    for (; j <= need && i + j < bytes.length; j++) {
      const c = bytes[i + j]!;
      let lo = 0x80;
      let hi = 0xbf;
      if (j === 1 && b === 0xe0) lo = 0xa0;
      else if (j === 1 && b === 0xed) hi = 0x9f;
      else if (j === 1 && b === 0xf0) lo = 0x90;
      else if (j === 1 && b === 0xf4) hi = 0x8f;
      if (c < lo || c > hi) return i;
    }
    if (j <= need) return bytes.length; // cut short by the end of the buffer
    i += need + 1;
  }
  return bytes.length;
}

/** The bytes of `held` + `chunk` a UTF-16 decoder keeps for the next chunk: an odd byte, and a high surrogate waiting for its pair. */
function heldUtf16(held: Buffer, chunk: Buffer, le: boolean): Buffer {
  const bytes = held.length ? Buffer.concat([held, chunk]) : chunk;
  const odd = bytes.length % 2;
  const end = bytes.length - odd;
  const last = end >= 2 ? (le ? bytes.readUInt16LE(end - 2) : bytes.readUInt16BE(end - 2)) : -1;
  const keep = odd + (last >= 0xd800 && last <= 0xdbff ? 2 : 0);
  return bytes.subarray(bytes.length - keep);
}

/**
 * Offset of the first bad unit in UTF-16 `bytes` (which start at a unit): a low
 * surrogate alone, or a high one followed by no low one. Its length when none
 * (a high surrogate or an odd byte at the very end: more may follow).
 */
export function firstInvalidUtf16(bytes: Buffer, le: boolean): number {
  for (let i = 0; i + 1 < bytes.length; i += 2) {
    const unit = le ? bytes.readUInt16LE(i) : bytes.readUInt16BE(i);
    if (unit >= 0xdc00 && unit <= 0xdfff) return i;
    if (unit >= 0xd800 && unit <= 0xdbff) {
      if (i + 3 >= bytes.length) return bytes.length;
      const next = le ? bytes.readUInt16LE(i + 2) : bytes.readUInt16BE(i + 2);
      if (next < 0xdc00 || next > 0xdfff) return i;
      i += 2;
    }
  }
  return bytes.length;
}

/** Length of an unfinished sequence at the end of `bytes` (0 when it ends cleanly). */
function incompleteTail(bytes: Buffer): number {
  for (let k = 1; k <= Math.min(3, bytes.length); k++) {
    const b = bytes[bytes.length - k]!;
    if (b < 0x80) return 0;
    if (b >= 0xc0) {
      const size = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
      return size > k ? k : 0;
    }
  }
  return 0;
}

/**
 * Splits text chunks into lines — CRLF, LF and a lone CR each end one, mixed
 * in one file too (a file edited on two systems, an old Mac export) —,
 * yielding the lines of each chunk together; a final line ending ends the last
 * line. A line longer than MAX_LINE is an input error naming it, before it is
 * held whole.
 */
export async function* splitLines(chunks: AsyncIterable<string>, name = 'the input'): AsyncGenerator<string[]> {
  let rest = '';
  let lineNo = 0;
  for await (const chunk of chunks) {
    const text = rest + chunk;
    const lines: string[] = [];
    let start = 0;
    // the next LF and the next CR, each looked for again only once passed
    // (indexOf: a regex over the text made reading a list a third slower)
    let lf = text.indexOf('\n');
    let cr = text.indexOf('\r');
    while (lf >= 0 || cr >= 0) {
      const i = cr < 0 || (lf >= 0 && lf < cr) ? lf : cr;
      // a CR last in the chunk may be the first half of a CRLF: wait for the next chunk
      if (i === cr && i === text.length - 1) break;
      if (i - start > MAX_LINE) throw tooLong(name, 'line', lineNo + lines.length + 1);
      lines.push(text.slice(start, i));
      start = i === cr && lf === i + 1 ? i + 2 : i + 1;
      if (lf >= 0 && lf < start) lf = text.indexOf('\n', start);
      if (cr >= 0 && cr < start) cr = text.indexOf('\r', start);
    }
    rest = text.slice(start);
    lineNo += lines.length;
    if (rest.length > MAX_LINE) throw tooLong(name, 'line', lineNo + 1);
    if (lines.length) yield lines;
  }
  if (rest.length > 0) yield [rest.endsWith('\r') ? rest.slice(0, -1) : rest];
}

export function tooLong(name: string, what: 'line' | 'row', n: number | undefined): UsageError {
  const where = n === undefined ? `a ${what}` : `${what} ${n}`;
  return new UsageError(`${name}: ${where} is longer than ${MAX_LINE / 1024 / 1024} MB; this is not an address list (a missing newline, or a binary file?)`);
}
