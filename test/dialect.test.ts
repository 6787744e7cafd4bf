// The legacy encodings both ways: a cell read from a Windows-1252 (or any
// single-byte) file must come out as the same bytes, its undefined bytes
// included; what an encoding cannot hold is counted, never silently dropped.
import { describe, expect, it } from 'vitest';
import { decoderFor, encoderFor, singleByteTable, unicodeEncoding } from '../src/dialect.js';

const every = Buffer.from(Array.from({ length: 256 }, (_, b) => b));

describe('single-byte encodings round-trip every byte', () => {
  it.each(['windows-1252', 'windows-1250', 'windows-1251', 'latin1', 'iso-8859-15', 'macintosh', 'cp437', 'cp850', 'koi8-r'])('%s', async (encoding) => {
    const text = (await decoderFor(encoding)).write(every);
    const encoder = await encoderFor(encoding);
    const back = encoder.encode(text);
    // Windows-1252's five undefined bytes (0x81 0x8D 0x8F 0x90 0x9D) among them: iconv-lite alone writes them back as 0x9D
    expect(back.equals(every)).toBe(true);
    expect(encoder.lost).toBe(0);
  });

  it("reads Windows-1252's undefined bytes as the C1 controls, as Windows and browsers do", async () => {
    const table = await singleByteTable('windows-1252');
    expect([0x81, 0x8d, 0x8f, 0x90, 0x9d].map((b) => table!.charCodeAt(b))).toEqual([0x81, 0x8d, 0x8f, 0x90, 0x9d]);
    expect(table!.slice(0x80, 0x81)).toBe('€');
  });

  it('knows a multi-byte encoding is none', async () => {
    expect(await singleByteTable('shift_jis')).toBeUndefined();
    expect(await singleByteTable('gbk')).toBeUndefined();
  });
});

describe('what an encoding cannot hold', () => {
  it('is written "?" and counted, a surrogate pair as one', async () => {
    const encoder = await encoderFor('windows-1252');
    expect(encoder.encode('Zoë 李 😀 ?').toString('latin1')).toBe('Zo\xeb ? ? ?');
    expect(encoder.lost).toBe(2);
  });

  it('is counted in a multi-byte encoding too, by the question marks that were not in the text', async () => {
    const encoder = await encoderFor('shift_jis');
    encoder.encode('日本? 😀');
    expect(encoder.lost).toBe(1);
  });

  it('is nothing in UTF-8, UTF-16 and UTF-32', async () => {
    const text = 'Zoë 李 😀';
    for (const [name, bytes] of [
      ['utf-8', Buffer.from(text, 'utf8')],
      ['UTF-16LE', Buffer.from(text, 'utf16le')],
      ['utf-16be', Buffer.from(text, 'utf16le').swap16()],
    ] as const) {
      const encoder = await encoderFor(name);
      expect(encoder.encode(text).equals(bytes), name).toBe(true);
      expect(encoder.lost).toBe(0);
    }
    const utf32 = await encoderFor('utf-32le');
    expect(utf32.encode('a😀')).toEqual(Buffer.from([0x61, 0, 0, 0, 0x00, 0xf6, 0x01, 0]));
  });
});

it('tells the Unicode encodings, which have a byte-order mark, by any spelling', () => {
  expect(['UTF8', 'utf-8', 'utf16le', 'UTF-16BE', 'utf-32le', 'windows-1252', 'latin1'].map(unicodeEncoding)).toEqual([
    'utf-8',
    'utf-8',
    'utf-16le',
    'utf-16be',
    'utf-32le',
    undefined,
    undefined,
  ]);
});
