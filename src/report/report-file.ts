import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { UsageError, writeError } from '../errors.js';

/**
 * `--report FILE` is checked before the run (a path that cannot be written,
 * found after a paid run, would fail it for nothing) and written at the end.
 */
export async function checkReportPath(path: string): Promise<void> {
  if (path === '-' || path === '') throw new UsageError(`--report ${path}: give the name of an .html file to write`);
  const target = await stat(path).catch(() => undefined);
  if (target?.isDirectory()) throw new UsageError(`cannot write the report to ${path}: it is a directory`);
  try {
    await access(dirname(path), constants.W_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such directory' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : code;
    throw new UsageError(`cannot write the report to ${path}: ${why}`, { cause: err });
  }
}

/**
 * Writes `text` to `path` whole or not at all: into a temp file beside it
 * (same file system, so the rename is atomic), synced, then renamed over it.
 * A failed or interrupted write leaves the previous file byte-identical.
 */
export async function writeFileAtomic(path: string, text: string, label = path): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    const fh = await open(temp, 'wx', 0o666);
    try {
      await fh.writeFile(text);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw writeError(label, err);
  }
}
