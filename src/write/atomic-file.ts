import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { constants, createWriteStream, unlinkSync, type WriteStream } from 'node:fs';
import { access, link, open, realpath, rename, rm, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { writeError } from '../errors.js';
import { syncDirectory } from '../durable.js';

/**
 * A file written whole or not at all: the content goes to a temporary file in
 * the target's directory (so the rename cannot cross devices) and is renamed
 * over the target only when complete. Until then the target is untouched, so a
 * run that fails or is interrupted leaves the previous file byte-identical.
 */
export interface AtomicFile {
  /** where the new content is written; the caller ends it */
  readonly stream: WriteStream;
  /**
   * Waits for the ended stream to close, makes the content durable and puts
   * it in place. `'create'` puts it there only if no file is there (an
   * interrupted run's partial output never replaces a complete one). False
   * when the file was left as it was.
   */
  commit(mode?: 'replace' | 'create'): Promise<boolean>;
  /** Drops the new content: the target stays as it was, the temporary file is removed. */
  discard(): Promise<void>;
}

/**
 * Writes `text` as the whole content of `file` and puts it in place (see
 * AtomicFile.commit for `mode`); on a failed write the target stays as it was.
 * For outputs written in one piece at the end of a run: --summary, --report.
 */
export async function writeWhole(file: AtomicFile, text: string, label: string, mode: 'replace' | 'create'): Promise<boolean> {
  try {
    await new Promise<void>((resolve, reject) => {
      file.stream.once('error', reject);
      file.stream.end(text, () => resolve());
    });
  } catch (err) {
    await file.discard();
    throw writeError(label, err);
  }
  return file.commit(mode);
}

/**
 * Opens `path` for an atomic write; `label` names it in errors. A path that
 * cannot be written fails here, before anything is read or sent. A symbolic
 * link is written through (its target is replaced, the link stays); a device
 * or a pipe (`/dev/null`, a FIFO) cannot be replaced and is written directly.
 */
export async function openAtomic(path: string, label: string): Promise<AtomicFile> {
  const target = await realpath(path).catch(() => path);
  const st = await stat(target).catch(() => undefined);
  if (st?.isDirectory()) throw writeError(label, Object.assign(new Error('is a directory'), { code: 'EISDIR' }));
  if (st && !st.isFile()) return direct(target, label);
  // Renaming over a file the user made read-only would bypass the protection: refuse as a write would.
  if (st) await access(target, constants.W_OK).catch((err: unknown) => Promise.reject(writeError(label, err)));
  const temp = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.mailsift-tmp`);
  const stream = createWriteStream(temp, { flags: 'wx', mode: 0o666 });
  pending.add(temp);
  removeAtExit();
  try {
    await once(stream, 'open'); // rejects with an 'error' that comes first
  } catch (err) {
    pending.delete(temp);
    throw writeError(label, err);
  }
  const closed = (): Promise<unknown> => (stream.closed ? Promise.resolve() : once(stream, 'close').catch(() => {}));
  return {
    stream,
    async commit(mode = 'replace') {
      await closed();
      try {
        // Written, then durable, then renamed: a crash leaves the old file or the new one, never an empty one.
        const fh = await open(temp, 'r+');
        try {
          // the mode of the file it replaces: a private list stays private
          if (st) await fh.chmod(st.mode & 0o7777);
          await fh.sync();
        } finally {
          await fh.close();
        }
        const placed = mode === 'replace' ? (await rename(temp, target), true) : await createOnly(temp, target);
        await syncDirectory(target);
        return placed;
      } catch (err) {
        throw writeError(label, err);
      } finally {
        await rm(temp, { force: true });
        pending.delete(temp);
      }
    },
    async discard() {
      stream.destroy();
      await closed();
      await rm(temp, { force: true });
      pending.delete(temp);
    },
  };
}

/** Puts `temp` at `target` unless a file is there; false when one is (temp is left for the caller to remove). */
async function createOnly(temp: string, target: string): Promise<boolean> {
  try {
    await link(temp, target); // fails when target exists, atomically
    await unlink(temp);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw err;
  }
  // a file system without hard links
  if (await stat(target).then(() => true, () => false)) return false;
  await rename(temp, target);
  return true;
}

/** A device or a pipe: written as it is, since it cannot be replaced. */
async function direct(target: string, label: string): Promise<AtomicFile> {
  const stream = createWriteStream(target);
  try {
    await once(stream, 'open');
  } catch (err) {
    throw writeError(label, err);
  }
  const closed = (): Promise<unknown> => (stream.closed ? Promise.resolve() : once(stream, 'close').catch(() => {}));
  return {
    stream,
    commit: async () => (await closed(), true),
    discard: async () => {
      stream.destroy();
      await closed();
    },
  };
}

/** Temporary files not yet renamed or removed: removed if the process exits first (a forced exit after Ctrl-C). */
const pending = new Set<string>();
let hooked = false;

function removeAtExit(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', () => {
    for (const temp of pending) {
      try {
        unlinkSync(temp);
      } catch {
        // already gone
      }
    }
  });
}
