import type { FileHandle } from 'node:fs/promises';

export interface ScanResult {
  /** bytes in the file */
  size: number;
  /** offset just after the last line that `onLine` accepted (0 if none) */
  goodEnd: number;
  /** complete lines that `onLine` refused (those after goodEnd included) */
  badLines: number;
}

const CHUNK = 1 << 20;
const NL = 0x0a;

/**
 * Reads `fh` line by line (UTF-8, `\n`-terminated) in fixed chunks, so a journal
 * of a million verdicts is never held as one string. `onLine` returns false for
 * a line it cannot use, and may throw to stop the scan. Bytes after the last
 * newline (a write torn by a crash) are never passed on; `goodEnd` tells the
 * caller where the usable file ends so it can cut off a torn or damaged tail
 * before appending.
 */
export async function scanLines(fh: FileHandle, onLine: (line: string, index: number) => boolean): Promise<ScanResult> {
  const buf = Buffer.allocUnsafe(CHUNK);
  let carry: Buffer | undefined;
  let pos = 0;
  let index = 0;
  let goodEnd = 0;
  let badLines = 0;
  for (;;) {
    const { bytesRead } = await fh.read(buf, 0, CHUNK, pos);
    if (bytesRead === 0) break;
    let start = 0;
    for (let nl = buf.indexOf(NL, 0); nl !== -1 && nl < bytesRead; nl = buf.indexOf(NL, start)) {
      const piece = buf.subarray(start, nl);
      const bytes = carry ? Buffer.concat([carry, piece]) : piece;
      carry = undefined;
      const lineEnd = pos + nl + 1;
      if (onLine(bytes.toString('utf8'), index++)) goodEnd = lineEnd;
      else badLines++;
      start = nl + 1;
    }
    if (start < bytesRead) {
      const rest = Buffer.from(buf.subarray(start, bytesRead));
      carry = carry ? Buffer.concat([carry, rest]) : rest;
    }
    pos += bytesRead;
  }
  return { size: pos, goodEnd, badLines };
}
