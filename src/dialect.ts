/**
 * The dialect of a delimited text: what a spreadsheet needs to open a CSV
 * output as it opened the input (its delimiter, line ending, encoding and
 * byte-order mark, and Excel's `sep=` line), and the legacy encodings both ways,
 * exactly. The reader tells it (read/), the CSV writer follows it (write/).
 */
export interface Dialect {
  /** one character: `,`, `;`, tab, or what a `sep=` line names */
  delimiter: string;
  eol: Eol;
  /** `utf-8`, `utf-16le`, `utf-16be`, `utf-32le`, `utf-32be`, or another name iconv-lite knows (`windows-1252`) */
  encoding: string;
  /** a byte-order mark first (only the Unicode encodings have one) */
  bom: boolean;
  /** Excel's first line `sep=X` as the input spelled its prefix (`sep=`), written again with the output's delimiter */
  sep?: string;
}

export type Eol = '\r\n' | '\n' | '\r';

/** What an output is written in when the input says nothing (a workbook, a list from a pipe): today's CSV. */
export const DEFAULT_DIALECT: Dialect = { delimiter: ',', eol: '\n', encoding: 'utf-8', bom: false };

/** An encoding name as mailsift compares them: `UTF_8`, `utf8` and `utf-8` are one. */
export const encodingKey = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]/g, '');

/** The Unicode encodings, which have a byte-order mark, by their key. */
const UNICODE: Record<string, string> = {
  utf8: 'utf-8',
  utf16le: 'utf-16le',
  utf16be: 'utf-16be',
  utf32le: 'utf-32le',
  utf32be: 'utf-32be',
  ucs2: 'utf-16le',
  utf16: 'utf-16le',
  utf32: 'utf-32le',
};

/** The Unicode encoding a name means (`UTF8` → `utf-8`), or undefined for a legacy one. */
export function unicodeEncoding(name: string): string | undefined {
  return UNICODE[encodingKey(name)];
}

/** Text to bytes in one encoding; `lost` counts the characters it had no bytes for (written as `?`). */
export interface CharsetEncoder {
  encode(text: string): Buffer;
  lost: number;
}

/** Bytes to text, a chunk at a time (a character may span chunks). */
export interface CharsetDecoder {
  write(bytes: Buffer): string;
  end(): string;
}

const QUESTION = 0x3f;

/**
 * An encoder for `encoding`: Node's own for UTF-8 and UTF-16, iconv-lite's for
 * the rest, through the exact table of a single-byte encoding (see
 * singleByteTable) so that a cell read from Windows-1252 comes out as the same
 * bytes. A character the encoding cannot hold is written `?` and counted.
 */
export async function encoderFor(encoding: string): Promise<CharsetEncoder> {
  const unicode = unicodeEncoding(encoding);
  if (unicode === 'utf-8') return { encode: (text) => Buffer.from(text, 'utf8'), lost: 0 };
  if (unicode === 'utf-16le') return { encode: (text) => Buffer.from(text, 'utf16le'), lost: 0 };
  if (unicode === 'utf-16be') return { encode: (text) => Buffer.from(text, 'utf16le').swap16(), lost: 0 };
  const iconv = (await import('iconv-lite')).default;
  const table = unicode === undefined ? await singleByteTable(encoding) : undefined;
  if (table !== undefined) {
    const bytes = new Int16Array(0x10000).fill(-1);
    for (let b = 0; b < 256; b++) if (table.charCodeAt(b) !== 0xfffd) bytes[table.charCodeAt(b)] = b;
    const encoder: CharsetEncoder = {
      encode(text) {
        const out = Buffer.allocUnsafe(text.length);
        let n = 0;
        for (let i = 0; i < text.length; i++) {
          const c = text.charCodeAt(i);
          // a surrogate pair is one character, and one `?`
          if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
            const d = text.charCodeAt(i + 1);
            if (d >= 0xdc00 && d <= 0xdfff) i++;
          }
          const b = bytes[c]!;
          if (b < 0) encoder.lost++;
          out[n++] = b < 0 ? QUESTION : b;
        }
        return out.subarray(0, n);
      },
      lost: 0,
    };
    return encoder;
  }
  // UTF-32 holds every character; a multi-byte legacy encoding (Shift_JIS, GBK)
  // writes `?` for what it cannot hold: counted by the question marks that
  // were not in the text
  const encoder: CharsetEncoder = {
    encode(text) {
      const out = iconv.encode(text, encoding);
      if (unicode === undefined) {
        const extra = count(out, QUESTION) - countChar(text, '?');
        if (extra > 0) encoder.lost += extra;
      }
      return out;
    },
    lost: 0,
  };
  return encoder;
}

/**
 * A decoder for a legacy (or UTF-32) encoding. A single-byte encoding is
 * decoded by its exact table (every byte a character of its own, so that the
 * encoder gives the same bytes back); others by iconv-lite.
 */
export async function decoderFor(encoding: string): Promise<CharsetDecoder> {
  const table = unicodeEncoding(encoding) === undefined ? await singleByteTable(encoding) : undefined;
  if (table !== undefined) {
    const units = new Uint16Array(256);
    for (let b = 0; b < 256; b++) units[b] = table.charCodeAt(b);
    return {
      write(bytes) {
        const text = new Uint16Array(bytes.length);
        for (let i = 0; i < bytes.length; i++) text[i] = units[bytes[i]!]!;
        return Buffer.from(text.buffer, text.byteOffset, text.byteLength).toString('utf16le');
      },
      end: () => '',
    };
  }
  const iconv = (await import('iconv-lite')).default;
  const decoder = iconv.getDecoder(encoding);
  return { write: (bytes) => decoder.write(bytes), end: () => decoder.end() ?? '' };
}

const tables = new Map<string, string | undefined>();

/**
 * The 256 characters of a single-byte encoding, or undefined for one that is
 * not (Shift_JIS, UTF-7). iconv-lite decodes a byte the encoding leaves
 * undefined as U+FFFD, and would write U+FFFD back as another byte: such a
 * byte from 0x80 to 0x9F is given the C1 control of its number instead, as
 * Windows and the WHATWG decoders do for Windows-1252's 0x81, 0x8D, 0x8F, 0x90
 * and 0x9D; another (Mac Roman's Apple logo, which iconv-lite lacks) a
 * private-use character of its own, U+F700 + the byte, as Windows gives some.
 * No address holds either, so no verdict changes, and every byte comes back.
 */
export async function singleByteTable(encoding: string): Promise<string | undefined> {
  const key = encodingKey(encoding);
  if (tables.has(key)) return tables.get(key);
  const iconv = (await import('iconv-lite')).default;
  const all = Buffer.from(Array.from({ length: 256 }, (_, b) => b));
  const chars = [...iconv.decode(all, encoding)];
  let table: string | undefined;
  // a multi-byte encoding decodes the 256 bytes to fewer characters, or some of them to other bytes
  if (chars.length === 256 && chars.every((c, b) => c === '\ufffd' || iconv.encode(c, encoding).equals(all.subarray(b, b + 1)))) {
    const used = new Set(chars);
    const stand = (b: number): string => {
      const c1 = String.fromCharCode(b);
      if (b >= 0x80 && b <= 0x9f && !used.has(c1)) return c1;
      const own = String.fromCharCode(0xf700 + b);
      return used.has(own) ? '\ufffd' : own;
    };
    table = chars.map((c, b) => (c === '\ufffd' ? stand(b) : c)).join('');
  }
  tables.set(key, table);
  return table;
}

function count(bytes: Buffer, byte: number): number {
  let n = 0;
  for (let i = bytes.indexOf(byte); i >= 0; i = bytes.indexOf(byte, i + 1)) n++;
  return n;
}

function countChar(text: string, char: string): number {
  let n = 0;
  for (let i = text.indexOf(char); i >= 0; i = text.indexOf(char, i + 1)) n++;
  return n;
}
