import { describe, expect, it } from 'vitest';
import { decodeBytes, firstInvalidUtf8, MAX_LINE, splitLines } from '../../src/read/decode.js';

async function* chunks(...parts: (string | number[])[]): AsyncGenerator<Buffer> {
  for (const p of parts) yield typeof p === 'string' ? Buffer.from(p) : Buffer.from(p);
}
async function text(source: AsyncIterable<string>): Promise<string> {
  let out = '';
  for await (const t of source) out += t;
  return out;
}

describe('decodeBytes', () => {
  it('names the byte of an invalid sequence, one split across chunks, and a truncated end', async () => {
    // "é" = C3 A9 split over two chunks decodes; the stray FF at offset 5 does not
    await expect(text(decodeBytes(chunks('ab', [0xc3], [0xa9, 0x63, 0xff]), 'f'))).rejects.toThrow('f: invalid UTF-8 at byte 5;');
    // an overlong encoding (C0 80) and a surrogate (ED A0 80) are invalid where they start
    await expect(text(decodeBytes(chunks('abc', [0xc0, 0x80]), 'f'))).rejects.toThrow('at byte 3;');
    await expect(text(decodeBytes(chunks('a', [0xed, 0xa0, 0x80]), 'f'))).rejects.toThrow('at byte 1;');
    // the input ends inside a sequence: the offset of its first byte
    await expect(text(decodeBytes(chunks('abcd', [0xe2, 0x82]), 'f'))).rejects.toThrow('at byte 4;');
    // a BOM counts
    await expect(text(decodeBytes(chunks([0xef, 0xbb, 0xbf], 'a', [0xff]), 'f'))).rejects.toThrow('at byte 4;');
  });

  it('--encoding utf-8 stays strict; a legacy encoding decodes every byte', async () => {
    await expect(text(decodeBytes(chunks([0x61, 0xe9]), 'f', 'UTF-8'))).rejects.toThrow('at byte 1;');
    expect(await text(decodeBytes(chunks([0x61, 0xe9, 0x80]), 'f', 'windows-1252'))).toBe('aé€');
    expect(await text(decodeBytes(chunks([0x61, 0xe9, 0x80]), 'f', 'latin1'))).toBe('aé\x80');
  });

  it('decodes UTF-16 by its BOM even when the BOM is split, whatever --encoding says', async () => {
    const le = Buffer.from('zoë@x.test', 'utf16le');
    expect(await text(decodeBytes(chunks([0xff], [0xfe, ...le]), 'f', 'latin1'))).toBe('zoë@x.test');
  });

  it('firstInvalidUtf8 leaves an unfinished sequence at the end to the next chunk', () => {
    expect(firstInvalidUtf8(Buffer.from([0x61, 0xf0, 0x9f]))).toBe(3);
    expect(firstInvalidUtf8(Buffer.from([0x61, 0xf0, 0x41]))).toBe(1);
  });
});

describe('splitLines', () => {
  it('stops at a line longer than the cap, naming it, without waiting for its end', async () => {
    async function* endless(): AsyncGenerator<string> {
      yield 'a@x.test\nb@x.test\n';
      for (let i = 0; i < 10_000; i++) yield 'x'.repeat(64 * 1024); // 640 MB if read whole
    }
    let read = 0;
    const lines = splitLines(endless(), 'f');
    await expect((async () => {
      for await (const l of lines) read += l.length;
    })()).rejects.toThrow(`f: line 3 is longer than ${MAX_LINE / 1024 / 1024} MB`);
    expect(read).toBe(2);
  });
});
