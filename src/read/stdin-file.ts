import { createReadStream, fstatSync, readFileSync } from 'node:fs';

/**
 * stdin that is a regular file (`mailsift validate - < list.csv`) can be read
 * twice, as a named file is: the pre-flight pass reads it by position from
 * where the run's reading begins, and leaves the descriptor's offset to the
 * run. Call before stdin is read. Returns how to open a second reading, or
 * undefined for a pipe, a terminal, a FIFO, a stream that is not this
 * process's descriptor 0, and a system that does not tell the offset (Linux's
 * /proc/self/fdinfo does): those keep stdin's rule, read once.
 */
export function stdinAsFile(stdin: { readonly fd?: number } | undefined): (() => NodeJS.ReadableStream) | undefined {
  if (stdin?.fd !== 0) return undefined;
  let start: number;
  try {
    if (!fstatSync(0).isFile()) return undefined;
    // `(read header; mailsift validate -) < file` leaves the offset past the start
    const pos = /^pos:\s*(\d+)$/m.exec(readFileSync('/proc/self/fdinfo/0', 'latin1'));
    if (!pos) return undefined;
    start = Number(pos[1]);
  } catch {
    return undefined;
  }
  // with `start`, reads are positional (pread): the run's own reading of fd 0 is not moved
  return () => createReadStream('', { fd: 0, start, autoClose: false, highWaterMark: 64 * 1024 });
}
