import { describe, expect, it } from 'vitest';
import { decodeBytes, firstInvalidUtf8, MAX_LINE, sniffUnicode, splitLines } from '../../src/read/decode.js';

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

  it('reads the same text however the bytes are cut: characters split, a U+FEFF inside kept, a bad byte named', async () => {
    // chunks that end where a character does skip the decoder (see decodeStrict): every cut must read alike
    const whole = 'ann@x.test\nzoë@exämple.test\n\ufeffbob@y.test\n𝔞@z.test\r\n中@文.test\n';
    const bytes = Buffer.from(whole);
    for (const cut of [1, 2, 3, 4, 5, 7, 16]) {
      const parts: number[][] = [];
      for (let i = 0; i < bytes.length; i += cut) parts.push([...bytes.subarray(i, i + cut)]);
      expect(await text(decodeBytes(chunks(...parts), 'f'))).toBe(whole);
      const bad = [...parts, [0x61, 0xff]];
      await expect(text(decodeBytes(chunks(...bad), 'f'))).rejects.toThrow(`f: invalid UTF-8 at byte ${bytes.length + 1};`);
    }
    // a BOM is dropped at the start only, however small the first chunk
    expect(await text(decodeBytes(chunks([0xef], [0xbb, 0xbf], 'a\n', [0xef, 0xbb, 0xbf], 'b'), 'f'))).toBe('a\n\ufeffb');
  });

  it('firstInvalidUtf8 leaves an unfinished sequence at the end to the next chunk', () => {
    expect(firstInvalidUtf8(Buffer.from([0x61, 0xf0, 0x9f]))).toBe(3);
    expect(firstInvalidUtf8(Buffer.from([0x61, 0xf0, 0x41]))).toBe(1);
  });
});

describe('splitLines', () => {
  const lines = async (chunks: string[]): Promise<string[]> => {
    const out: string[] = [];
    for await (const l of splitLines(
      (async function* () {
        yield* chunks;
      })(),
    ))
      out.push(...l);
    return out;
  };

  it('ends a line at CRLF, LF or a lone CR, mixed too, a CRLF split across chunks included', async () => {
    expect(await lines(['a\r', '\nb\rc\nd\r\n'])).toEqual(['a', 'b', 'c', 'd']);
    expect(await lines(['a\r', 'b'])).toEqual(['a', 'b']);
    expect(await lines(['a\r'])).toEqual(['a']);
    expect(await lines(['a\n\n\rb\r\r\nc'])).toEqual(['a', '', '', 'b', '', 'c']);
  });

  it('stops at a line longer than the cap, naming it, without waiting for its end', async () => {
    async function* endless(): AsyncGenerator<string> {
      yield 'a@x.test\nb@x.test\n';
      for (let i = 0; i < 10_000; i++) yield 'x'.repeat(64 * 1024); // 640 MB if read whole
    }
    let read = 0;
    const lines = splitLines(endless(), 'f');
    await expect(
      (async () => {
        for await (const l of lines) read += l.length;
      })(),
    ).rejects.toThrow(`f: line 3 is longer than ${MAX_LINE / 1024 / 1024} MB`);
    expect(read).toBe(2);
  });
});

/** `text` in UTF-32 (Node has no encoder for it) */
function utf32(text: string, bigEndian: boolean): Buffer {
  const out = Buffer.alloc([...text].length * 4);
  [...text].forEach((ch, k) => (bigEndian ? out.writeUInt32BE(ch.codePointAt(0)!, k * 4) : out.writeUInt32LE(ch.codePointAt(0)!, k * 4)));
  return out;
}

describe('UTF-16 and UTF-32, with and without a byte-order mark', () => {
  const sample = 'Name,Email\r\nZoë,jane@mx.test\r\n';
  const le16 = Buffer.from(sample, 'utf16le');
  const be16 = Buffer.from(sample, 'utf16le').swap16();
  const cases: [string, Buffer][] = [
    ['UTF-16 LE, no BOM', le16],
    ['UTF-16 BE, no BOM', be16],
    ['UTF-32 LE, no BOM', utf32(sample, false)],
    ['UTF-32 BE, no BOM', utf32(sample, true)],
    ['UTF-32 LE with BOM', Buffer.concat([Buffer.from([0xff, 0xfe, 0, 0]), utf32(sample, false)])],
    ['UTF-32 BE with BOM', Buffer.concat([Buffer.from([0, 0, 0xfe, 0xff]), utf32(sample, true)])],
  ];
  it.each(cases)('%s is decoded', async (_, bytes) => {
    // in small pieces too, as a pipe may hand them over
    expect(await text(decodeBytes(chunks(Array.from(bytes)), 'f'))).toBe(sample);
    expect(
      await text(decodeBytes(chunks(...Array.from({ length: Math.ceil(bytes.length / 7) }, (_, k) => Array.from(bytes.subarray(k * 7, k * 7 + 7)))), 'f')),
    ).toBe(sample);
  });

  it('the zero bytes tell which; UTF-8 (no zeros) and binary noise are left alone', () => {
    expect(sniffUnicode(le16)).toBe('utf-16le');
    expect(sniffUnicode(be16)).toBe('utf-16be');
    expect(sniffUnicode(Buffer.from(sample))).toBeUndefined();
    expect(sniffUnicode(Buffer.from([1, 0, 0, 2, 0, 3, 4, 0, 0, 0, 5, 6]))).toBeUndefined();
  });

  it('an --encoding given wins over the sniffing', async () => {
    expect(await text(decodeBytes(chunks(Array.from(le16)), 'f', 'latin1'))).toBe(le16.toString('latin1'));
  });
});
