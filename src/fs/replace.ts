import { constants } from 'node:fs';
import { link, open, rename, rm, stat, unlink, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { syncDirectory } from './durable.js';
import { holdLock } from './owner.js';
import { removeAtExit, sweep, tempBeside } from './temp.js';

/**
 * A file replaced whole or not at all, the one way mailsift does it (outputs,
 * the cache's rewrite, `keys revoke`, the stored key): the new content goes to
 * a temp file beside the target (the same directory, so the rename cannot
 * cross devices), is made durable (fsync), and is renamed over the target
 * only then. Until then the target is untouched; a crash leaves the old file
 * or the new one, never a half-written one. The temp file is named after its
 * owner and locked while it lives (owner.ts), removed if the process exits
 * first, and removed by a later run if this one dies (temp.ts).
 */
export interface Replacement {
  /** the temp file, created empty and open for writing: the new content goes through it (or a stream made from it) */
  readonly handle: FileHandle;
  /** the temp file's path */
  readonly path: string;
  /**
   * Makes the content durable (fsync), with the mode of the file it replaces
   * (see ReplaceOptions.keepMode), and closes the handle: the first half of
   * put, which does it when not done yet.
   */
  sync(): Promise<void>;
  /**
   * Puts the content in place: `'replace'` renames it over the target;
   * `'create'` puts it there only if no file is there (false then, and the
   * target is left as it was). The temp file is gone after, either way.
   */
  put(how?: 'replace' | 'create'): Promise<boolean>;
  /** Drops the new content: the target stays as it was, the temp file is removed. */
  discard(): Promise<void>;
}

export interface ReplaceOptions {
  /** the mode of a new file, less the umask; 0o600 (private) unless said */
  mode?: number;
  /**
   * The new file takes the mode of the file it replaces (a list made private
   * stays private, a cache or keys file shared with a group stays shared).
   * True unless said; false for a file that must have `mode` whatever was there.
   */
  keepMode?: boolean;
}

/**
 * A replacement for `target`, which is renamed over as it is: a symbolic link
 * at `target` is replaced, not what it points to (a caller that writes
 * through links resolves them first). Throws the file system's error (ENOENT,
 * EACCES...) when the temp file cannot be made; leftovers of dead runs in the
 * target's directory are removed first.
 */
export async function replacement(target: string, o: ReplaceOptions = {}): Promise<Replacement> {
  const old = o.keepMode === false ? undefined : await stat(target).catch(() => undefined);
  const mode = old?.isFile() ? old.mode & 0o7777 : undefined;
  await sweep(dirname(target));
  const path = tempBeside(target);
  // 'wx' (O_CREAT|O_EXCL): a name planted in a shared directory, a link included, is never opened
  const handle = await open(path, 'wx', o.mode ?? 0o600);
  const forget = removeAtExit(path);
  // Held until the temp file is renamed or removed: a run in another PID namespace
  // sharing this folder tells by it that the file's owner lives (owner.ts).
  const lock = await holdLock(path).catch(() => undefined);
  let synced: Promise<void> | undefined;
  let done = false;
  const sync = async (): Promise<void> => {
    // the handle, or, once a stream made from it has closed it, the file again (never through a link)
    const fh = handle.fd !== -1 ? handle : await open(path, constants.O_RDWR | constants.O_NOFOLLOW);
    try {
      if (mode !== undefined) await fh.chmod(mode);
      await fh.sync();
    } finally {
      await fh.close();
    }
  };
  const end = async (): Promise<void> => {
    if (done) return;
    done = true;
    if (handle.fd !== -1) await handle.close().catch(() => {});
    await rm(path, { force: true });
    forget();
    await lock?.close().catch(() => {});
  };
  return {
    handle,
    path,
    sync: () => (synced ??= sync()),
    async put(how = 'replace') {
      try {
        await (synced ??= sync());
        const placed = how === 'replace' ? (await rename(path, target), true) : await createOnly(path, target);
        await syncDirectory(target);
        return placed;
      } finally {
        await end();
      }
    },
    discard: end,
  };
}

/**
 * Replaces `target` with `content`, whole (see Replacement): on any failure
 * the target stays as it was and no temp file is left.
 */
export async function replaceWhole(target: string, content: string | Uint8Array, o: ReplaceOptions = {}): Promise<void> {
  const r = await replacement(target, o);
  try {
    await r.handle.writeFile(content);
    await r.put('replace');
  } catch (err) {
    await r.discard();
    throw err;
  }
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
  if (
    await stat(target).then(
      () => true,
      () => false,
    )
  )
    return false;
  await rename(temp, target);
  return true;
}
