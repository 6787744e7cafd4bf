import { sniffUnicode } from './decode.js';
import type { ZipFile } from './zip.js';

/**
 * What the wrong file looks like, told by its first bytes, so that a PNG, a
 * PDF or an executable given by mistake is named as what it is (exit 2)
 * instead of "invalid UTF-8 … give --encoding" or a run of invalid rows.
 */
const SIGNATURES: [bytes: (number | string)[], offset: number, what: string][] = [
  [[0x89, 'PNG'], 0, 'a PNG image'],
  [[0xff, 0xd8, 0xff], 0, 'a JPEG image'],
  [['GIF8'], 0, 'a GIF image'],
  [['%PDF-'], 0, 'a PDF document'],
  [[0x1f, 0x8b], 0, 'a gzip archive (decompress it first)'],
  [['BZh'], 0, 'a bzip2 archive (decompress it first)'],
  [[0xfd, '7zXZ', 0], 0, 'an xz archive (decompress it first)'],
  [[0x28, 0xb5, 0x2f, 0xfd], 0, 'a zstd archive (decompress it first)'],
  [['7z', 0xbc, 0xaf, 0x27, 0x1c], 0, 'a 7-Zip archive'],
  [['Rar!', 0x1a, 0x07], 0, 'a RAR archive'],
  [['ustar'], 257, 'a tar archive'],
  [[0x7f, 'ELF'], 0, 'an executable (ELF)'],
  [[0xcf, 0xfa, 0xed, 0xfe], 0, 'an executable (Mach-O)'],
  [[0xca, 0xfe, 0xba, 0xbe], 0, 'an executable or Java class file'],
  [[0, 'asm'], 0, 'a WebAssembly module'],
  [['SQLite format 3', 0], 0, 'an SQLite database'],
  [['ftyp'], 4, 'a video or audio file (MP4, MOV, M4A)'],
  [['OggS'], 0, 'an Ogg audio or video file'],
  [['ID3'], 0, 'an MP3 audio file'],
];

const matches = (head: Buffer, bytes: (number | string)[], offset: number): boolean => {
  let at = offset;
  for (const part of bytes) {
    const b = typeof part === 'number' ? Buffer.from([part]) : Buffer.from(part, 'latin1');
    if (head.length < at + b.length || !head.subarray(at, at + b.length).equals(b)) return false;
    at += b.length;
  }
  return true;
};

/** Byte-order marks: a text that starts with one is text, zero bytes and all (UTF-16, UTF-32). */
const hasBom = (head: Buffer): boolean =>
  (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) ||
  (head[0] === 0xff && head[1] === 0xfe) ||
  (head[0] === 0xfe && head[1] === 0xff) ||
  (head[0] === 0 && head[1] === 0 && head[2] === 0xfe && head[3] === 0xff);

/**
 * What a file that is not text is, by its first bytes: "a PNG image", ...,
 * or "a binary file" for zero bytes that are not UTF-16 or UTF-32 (no text
 * holds them); undefined for what may be text. With `--encoding` the zero
 * bytes are the user's call.
 */
export function binaryKind(head: Buffer, encodingGiven: boolean): string | undefined {
  for (const [bytes, offset, what] of SIGNATURES) if (matches(head, bytes, offset)) return what;
  if (encodingGiven || hasBom(head)) return undefined;
  const sample = head.subarray(0, 4096);
  if (sample.indexOf(0) >= 0 && sniffUnicode(head) === undefined) {
    // zero bytes on one side of each pair are how UTF-16 looks when too little of it is ASCII to tell
    let even = 0;
    let odd = 0;
    for (let i = 0; i < sample.length; i++) if (sample[i] === 0) i % 2 ? odd++ : even++;
    if (Math.min(even, odd) <= Math.max(even, odd) / 10) {
      return `a binary file (if it is UTF-16 text without a byte-order mark, give --encoding ${odd > even ? 'utf-16le' : 'utf-16be'})`;
    }
    return 'a binary file';
  }
  return undefined;
}

/**
 * What a zip archive holds when it is not an Excel workbook (a Word file, an
 * OpenDocument file, an .xlsb, any zip); undefined for a workbook. Told by the
 * parts each format must have.
 */
export function zipKind(zip: ZipFile, officeDocument: string | undefined): string | undefined {
  if (officeDocument?.endsWith('.xml') && !/^(word|ppt)\//.test(officeDocument)) return undefined;
  if (!officeDocument && zip.entry('xl/workbook.xml')) return undefined;
  if (officeDocument?.endsWith('.bin') || zip.entry('xl/workbook.bin')) return 'an Excel binary workbook (.xlsb): save it as .xlsx or CSV';
  if (zip.entry('word/document.xml')) return 'a Word document (.docx)';
  if (zip.entry('ppt/presentation.xml')) return 'a PowerPoint presentation (.pptx)';
  if (zip.entry('mimetype') && zip.entry('content.xml')) return 'an OpenDocument file (.ods, .odt): save it as .xlsx or CSV';
  return 'a zip archive';
}
