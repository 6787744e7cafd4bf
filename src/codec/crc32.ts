import { crc32 as zlibCrc32 } from 'node:zlib';

const TABLE = new Int32Array(256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  TABLE[n] = c;
}

/**
 * CRC-32 (IEEE, as zlib's) of the UTF-8 bytes of `s`. An ASCII string, which
 * nearly every journal line is, is hashed here code unit by code unit: for a
 * million lines of about 60 characters that took 0.15 s against zlib's 0.18-0.28
 * s, which first copies the string out as UTF-8. Anything else goes to zlib.
 */
export function crc32(s: string): number {
  let c = -1;
  for (let i = 0; i < s.length; i++) {
    const u = s.charCodeAt(i);
    if (u >= 0x80) return zlibCrc32(s);
    c = TABLE[(c ^ u) & 0xff]! ^ (c >>> 8);
  }
  return (c ^ -1) >>> 0;
}

const HEX: string[] = [];
for (let b = 0; b < 256; b++) HEX.push(b.toString(16).padStart(2, '0'));

/** `n` as 8 lower-case hex digits */
export function hex8(n: number): string {
  return HEX[n >>> 24]! + HEX[(n >>> 16) & 0xff]! + HEX[(n >>> 8) & 0xff]! + HEX[n & 0xff]!;
}
