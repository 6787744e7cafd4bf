import { open, type FileHandle } from 'node:fs/promises';
import { Readable, pipeline } from 'node:stream';
import { crc32, createInflateRaw, inflateRawSync } from 'node:zlib';
import type { XlsxError } from '../errors.js';

/** One member of the archive, as its central directory describes it. */
export interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  size: number;
  crc: number;
  localOffset: number;
}

/** More members than any workbook has (a sheet, its rels and drawings each count): a bound on the directory's memory. */
const MAX_ENTRIES = 100_000;
const CHUNK = 64 * 1024;
/**
 * A file this small is read in one go, and a part this small inflated in one
 * call (bounded by its declared size): a workbook of a few rows is then a
 * handful of system calls, not a few per part.
 */
const SMALL_FILE = 8 * 1024 * 1024;
const SMALL_PART = 4 * 1024 * 1024;
const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

/**
 * A zip archive read through its central directory, the one index every
 * producer writes last, so that its members can be read in any order (Excel
 * and LibreOffice store the shared strings after the sheets that use them).
 * Every member read is checked against the directory: its compression method,
 * its size and its CRC-32. A lying size, corrupt deflate data or a cut-off
 * archive is a refusal, never a short read taken for the whole.
 */
export class ZipFile {
  private constructor(
    private readonly file: FileHandle | Buffer,
    private readonly fileSize: number,
    private readonly entries: Map<string, ZipEntry>,
    private readonly fail: (reason: string) => XlsxError,
  ) {}

  static async open(path: string, fail: (reason: string) => XlsxError): Promise<ZipFile> {
    const handle = await open(path, 'r');
    let file: FileHandle | Buffer = handle;
    try {
      const { size } = await handle.stat();
      if (size <= SMALL_FILE) {
        file = await handle.readFile();
        await handle.close();
      }
      return new ZipFile(file, size, await readDirectory((buf, at) => readInto(file, buf, at), size, fail), fail);
    } catch (err) {
      if (file === handle) await handle.close();
      throw err;
    }
  }

  /** The member named `name` (leading slash and letter case forgiven, as Excel forgives them). */
  entry(name: string): ZipEntry | undefined {
    const key = name.replace(/^\/+/, '');
    return this.entries.get(key) ?? this.entries.get(key.toLowerCase());
  }

  /**
   * A member's bytes, uncompressed and verified, a chunk at a time. `onRead`
   * is told the compressed bytes as they are read (for progress).
   */
  async *read(entry: ZipEntry, onRead?: (bytes: number) => void): AsyncGenerator<Buffer> {
    const head = Buffer.alloc(30);
    await this.readAt(head, entry.localOffset, entry.name);
    if (head.readUInt32LE(0) !== LOCAL) throw this.fail(`${entry.name}: no local header where the directory says`);
    const start = entry.localOffset + 30 + head.readUInt16LE(26) + head.readUInt16LE(28);
    if (start + entry.compressedSize > this.fileSize) throw this.fail(`${entry.name} runs past the end of the file (cut short?)`);
    if (entry.method !== 0 && entry.method !== 8) {
      throw this.fail(`${entry.name} uses compression method ${entry.method}; a workbook uses deflate (8) or none (0)`);
    }
    const small = entry.compressedSize <= SMALL_PART && entry.size <= SMALL_PART * 8;
    const raw = small ? undefined : Readable.from(this.range(start, entry.compressedSize, entry.name, onRead));
    const body: AsyncIterable<Buffer> = raw
      ? entry.method === 0
        ? raw
        : pipeline(raw, createInflateRaw({ chunkSize: CHUNK }), () => {})
      : this.whole(entry, start, onRead);
    let size = 0;
    let crc = 0;
    try {
      for await (const chunk of body) {
        size += chunk.length;
        // more than the directory promised: stop now, before an inflate bomb runs on
        if (size > entry.size) throw this.fail(`${entry.name} holds more data than its declared size`);
        crc = crc32(chunk, crc);
        yield chunk;
      }
    } catch (err) {
      if ((err as { code?: unknown }).code?.toString().startsWith('Z_')) {
        throw this.fail(`${entry.name}: invalid compressed data (${(err as Error).message})`);
      }
      throw err;
    }
    if (size !== entry.size) throw this.fail(`${entry.name} holds less data than its declared size`);
    if (crc >>> 0 !== entry.crc) throw this.fail(`${entry.name} fails its checksum (CRC-32)`);
  }

  close(): Promise<void> {
    return Buffer.isBuffer(this.file) ? Promise.resolve() : this.file.close();
  }

  /** A small part read and inflated in one go; its declared size bounds the output (an inflate bomb stops there). */
  private async *whole(entry: ZipEntry, start: number, onRead?: (bytes: number) => void): AsyncGenerator<Buffer> {
    const raw = Buffer.allocUnsafe(entry.compressedSize);
    await this.readAt(raw, start, entry.name);
    let data: Buffer;
    if (entry.method === 0) data = raw;
    else {
      try {
        data = inflateRawSync(raw, { maxOutputLength: Math.max(entry.size, 1) + 1 });
      } catch (err) {
        if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw this.fail(`${entry.name} holds more data than its declared size`);
        throw err;
      }
    }
    // progress told as the data is handed on, in proportion: it was read all at once
    let told = 0;
    for (let at = 0; at < data.length; at += CHUNK) {
      const part = data.subarray(at, at + CHUNK);
      const upTo = Math.round((raw.length * (at + part.length)) / data.length);
      onRead?.(upTo - told);
      told = upTo;
      yield part;
    }
    if (data.length === 0) onRead?.(raw.length);
  }

  private async *range(start: number, length: number, name: string, onRead?: (bytes: number) => void): AsyncGenerator<Buffer> {
    for (let at = start; at < start + length; at += CHUNK) {
      const buf = Buffer.allocUnsafe(Math.min(CHUNK, start + length - at));
      await this.readAt(buf, at, name);
      onRead?.(buf.length);
      yield buf;
    }
  }

  private async readAt(buf: Buffer, position: number, name: string): Promise<void> {
    if ((await readInto(this.file, buf, position)) < buf.length) throw this.fail(`${name} runs past the end of the file (cut short?)`);
  }
}

/** Fills `buf` from `position` of the file (or of the file's bytes in memory); the count read. */
async function readInto(file: FileHandle | Buffer, buf: Buffer, position: number): Promise<number> {
  if (Buffer.isBuffer(file)) return file.copy(buf, 0, position, Math.min(file.length, position + buf.length));
  return (await file.read(buf, 0, buf.length, position)).bytesRead;
}

async function readDirectory(
  read: (buf: Buffer, position: number) => Promise<number>,
  fileSize: number,
  fail: (reason: string) => XlsxError,
): Promise<Map<string, ZipEntry>> {
  // The end record sits in the last 22 bytes, or before a comment of at most 64 KB.
  const tailLength = Math.min(fileSize, 22 + 0xffff);
  const tail = Buffer.alloc(tailLength);
  await read(tail, fileSize - tailLength);
  let eocd = -1;
  for (let i = tailLength - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) === EOCD) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw fail('no zip directory at its end (the file is cut short or not a zip)');
  const count = tail.readUInt16LE(eocd + 10);
  const dirSize = tail.readUInt32LE(eocd + 12);
  const dirOffset = tail.readUInt32LE(eocd + 16);
  if (count === 0xffff || dirOffset === 0xffffffff || dirSize === 0xffffffff) {
    throw fail('a ZIP64 archive (over 4 GB or 65535 parts), which no workbook needs');
  }
  const eocdAt = fileSize - tailLength + eocd;
  if (dirOffset + dirSize > eocdAt) throw fail('its zip directory points past the end of the file (cut short?)');
  if (count > MAX_ENTRIES) throw fail(`more than ${MAX_ENTRIES} parts`);
  const dir = Buffer.alloc(dirSize);
  await read(dir, dirOffset);
  const entries = new Map<string, ZipEntry>();
  let p = 0;
  for (let k = 0; k < count; k++) {
    if (p + 46 > dir.length || dir.readUInt32LE(p) !== CENTRAL) throw fail('a damaged zip directory');
    const flags = dir.readUInt16LE(p + 8);
    const nameLength = dir.readUInt16LE(p + 28);
    const next = p + 46 + nameLength + dir.readUInt16LE(p + 30) + dir.readUInt16LE(p + 32);
    if (next > dir.length) throw fail('a damaged zip directory');
    const name = dir.toString(flags & 0x800 ? 'utf8' : 'latin1', p + 46, p + 46 + nameLength);
    if (flags & 1) throw fail(`${name} is encrypted`);
    const entry: ZipEntry = {
      name,
      method: dir.readUInt16LE(p + 10),
      crc: dir.readUInt32LE(p + 16),
      compressedSize: dir.readUInt32LE(p + 20),
      size: dir.readUInt32LE(p + 24),
      localOffset: dir.readUInt32LE(p + 42),
    };
    if (entry.size === 0xffffffff || entry.compressedSize === 0xffffffff || entry.localOffset === 0xffffffff) {
      throw fail(`${name} is a ZIP64 member (over 4 GB), which no workbook needs`);
    }
    if (entry.localOffset + 30 > dirOffset) throw fail(`${name} starts past the end of the data`);
    if (!entries.has(name)) entries.set(name, entry);
    if (!entries.has(name.toLowerCase())) entries.set(name.toLowerCase(), entry);
    p = next;
  }
  return entries;
}
