import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { crc32, createDeflateRaw, deflateRawSync, type DeflateRaw } from 'node:zlib';
import { waitDrain } from './sink.js';

/**
 * The most a zip without ZIP64 can say for a size or an offset. 0xFFFFFFFF
 * itself means "see the ZIP64 record", which mailsift's own reader refuses
 * (read/zip.ts), so an archive stays below it.
 */
export const ZIP32_MAX = 0xfffffffe;

const LOCAL = 0x04034b50;
const DESCRIPTOR = 0x08074b50;
const CENTRAL = 0x02014b50;
const END = 0x06054b50;
/** bit 3: the CRC and sizes follow the data, in a data descriptor */
const FLAG_DESCRIPTOR = 0x0008;
const DEFLATE = 8;
/** version 2.0: deflate */
const VERSION = 20;
/** 1980-01-01 00:00 in MS-DOS form: a fixed time, so the same rows give the same bytes */
const DOS_TIME = 0;
const DOS_DATE = (0 << 9) | (1 << 5) | 1;

interface Written {
  name: Buffer;
  flags: number;
  crc: number;
  compressed: number;
  size: number;
  offset: number;
}

/** One entry being streamed: its bytes go through deflate as they come. */
export interface ZipEntryStream {
  /** Deflates `bytes`; resolves when there is room for more (backpressure from the output). */
  write(bytes: Buffer): Promise<void>;
  /** bytes handed to write() so far */
  readonly size: number;
  /** Resolves when deflate has room again (at once when it has): whoever writes next waits here, not only the last writer. */
  ready(): Promise<void>;
  /** Ends the entry: the rest of its data, then its data descriptor. */
  end(): Promise<void>;
}

/**
 * A zip archive written front to back as it is made, never held whole: each
 * entry's local header, its deflated data (node:zlib), then — for an entry
 * streamed at an unknown length — a data descriptor with its CRC-32 and sizes;
 * the central directory at the end. Backpressure goes through the streams'
 * public API: write() returning false, then 'drain'; pipe() between deflate and
 * the output. Without ZIP64: the caller keeps sizes and offsets at most
 * ZIP32_MAX (`written` says how far the archive has come).
 */
export class ZipStream {
  private readonly entries: Written[] = [];
  /** bytes handed to the output so far: the next entry's offset */
  private offset = 0;
  /** the entry's compressor while one is streamed */
  private deflate: DeflateRaw | undefined;

  constructor(
    private readonly out: Writable,
    /** true once the output is unusable (its reader gone, or a write failed): waits end at once */
    private readonly broken: () => boolean,
    private readonly level: number,
  ) {
    // An output that failed never drains: the compressor paused on it goes too, so no wait hangs.
    out.once('error', () => this.deflate?.destroy());
  }

  /** bytes of the archive written so far */
  get written(): number {
    return this.offset;
  }

  /** A small entry known whole: deflated in one piece, its header says its sizes. */
  async add(name: string, content: string): Promise<void> {
    const data = Buffer.from(content, 'utf8');
    const deflated = deflateRawSync(data, { level: this.level });
    const entry: Written = { name: Buffer.from(name, 'utf8'), flags: 0, crc: crc32(data), compressed: deflated.length, size: data.length, offset: this.offset };
    this.entries.push(entry);
    await this.put(localHeader(entry));
    await this.put(deflated);
  }

  /** An entry of unknown length, streamed: write() its bytes, then end() it before the next. */
  async stream(name: string): Promise<ZipEntryStream> {
    const entry: Written = { name: Buffer.from(name, 'utf8'), flags: FLAG_DESCRIPTOR, crc: 0, compressed: 0, size: 0, offset: this.offset };
    this.entries.push(entry);
    await this.put(localHeader(entry));
    const deflate: DeflateRaw = createDeflateRaw({ level: this.level });
    this.deflate = deflate;
    deflate.on('data', (chunk: Buffer) => {
      entry.compressed += chunk.length;
      this.offset += chunk.length;
    });
    // pipe() pauses deflate while the output is full, and so deflate's own write() says "wait"
    deflate.pipe(this.out, { end: false });
    const broken = this.broken;
    /** the wait for deflate's 'drain', shared: the pipeline may drain while a drain waits, and one listener serves both */
    let room: Promise<void> | undefined;
    const ready = (): Promise<void> =>
      deflate.writableNeedDrain && !broken() ? (room ??= waitDrain(deflate, broken).finally(() => (room = undefined))) : Promise.resolve();
    return {
      ready,
      get size() {
        return entry.size;
      },
      write: async (bytes) => {
        if (broken()) return;
        entry.crc = crc32(bytes, entry.crc);
        entry.size += bytes.length;
        deflate.write(bytes);
        await ready();
      },
      end: async () => {
        deflate.end();
        // 'end' comes once deflate's last bytes were handed to the output
        await finished(deflate, { writable: false }).catch(() => {});
        deflate.unpipe(this.out);
        this.deflate = undefined;
        const d = Buffer.alloc(16);
        d.writeUInt32LE(DESCRIPTOR, 0);
        d.writeUInt32LE(entry.crc >>> 0, 4);
        d.writeUInt32LE(entry.compressed, 8);
        d.writeUInt32LE(entry.size, 12);
        await this.put(d);
      },
    };
  }

  /** The central directory and its end record: the archive is complete. */
  async finish(): Promise<void> {
    const start = this.offset;
    for (const e of this.entries) {
      const h = Buffer.alloc(46);
      h.writeUInt32LE(CENTRAL, 0);
      h.writeUInt16LE(VERSION, 4); // made by: MS-DOS attributes, version 2.0
      h.writeUInt16LE(VERSION, 6);
      h.writeUInt16LE(e.flags, 8);
      h.writeUInt16LE(DEFLATE, 10);
      h.writeUInt16LE(DOS_TIME, 12);
      h.writeUInt16LE(DOS_DATE, 14);
      h.writeUInt32LE(e.crc >>> 0, 16);
      h.writeUInt32LE(e.compressed, 20);
      h.writeUInt32LE(e.size, 24);
      h.writeUInt16LE(e.name.length, 28);
      // extra, comment, disk, internal and external attributes: 0
      h.writeUInt32LE(e.offset, 42);
      await this.put(Buffer.concat([h, e.name]));
    }
    const end = Buffer.alloc(22);
    end.writeUInt32LE(END, 0);
    end.writeUInt16LE(this.entries.length, 8);
    end.writeUInt16LE(this.entries.length, 10);
    end.writeUInt32LE(this.offset - start, 12);
    end.writeUInt32LE(start, 16);
    await this.put(end);
  }

  private async put(bytes: Buffer): Promise<void> {
    this.offset += bytes.length;
    if (this.broken()) return;
    if (!this.out.write(bytes)) await waitDrain(this.out, this.broken);
  }
}

function localHeader(e: Written): Buffer {
  const h = Buffer.alloc(30);
  h.writeUInt32LE(LOCAL, 0);
  h.writeUInt16LE(VERSION, 4);
  h.writeUInt16LE(e.flags, 6);
  h.writeUInt16LE(DEFLATE, 8);
  h.writeUInt16LE(DOS_TIME, 10);
  h.writeUInt16LE(DOS_DATE, 12);
  // a streamed entry's CRC and sizes are 0 here and follow in its data descriptor
  h.writeUInt32LE(e.crc >>> 0, 14);
  h.writeUInt32LE(e.compressed, 18);
  h.writeUInt32LE(e.size, 22);
  h.writeUInt16LE(e.name.length, 26);
  return Buffer.concat([h, e.name]);
}
