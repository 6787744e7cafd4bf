import { randomBytes } from 'node:crypto';
import { link, open, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { MailsiftError, pathTrouble, UsageError } from '../errors.js';
import { isAlive, ownerIsGone, SELF } from '../owner.js';

export interface LockOptions {
  /** wait this long for a live owner to let go, instead of refusing at once */
  waitMs?: number;
}

/**
 * One run per journal at a time: two runs appending to the same journal would
 * each pay for what the other is sending, and one could cut off the other's
 * half-written last line as torn. `FILE.lock` holds the owner's pid; a lock
 * whose process is gone (a SIGKILL, a reboot) is taken over — by one run only,
 * however many see it dead at the same moment (see takeLock).
 */
export async function lockFile(path: string, what: string, o: LockOptions = {}): Promise<() => Promise<void>> {
  const lock = `${path}.lock`;
  const deadline = Date.now() + (o.waitMs ?? 0);
  await removeDeadFresh(lock);
  for (;;) {
    try {
      await takeLock(lock, 0);
      return async () => {
        await rm(lock, { force: true });
      };
    } catch (err) {
      if (err instanceof Busy) {
        if (Date.now() < deadline) {
          await sleep(25);
          continue;
        }
        throw new UsageError(`${what} ${path} is in use by another mailsift run (pid ${err.pid}); wait for it, or give another ${what} path`);
      }
      if (err instanceof MailsiftError) throw err;
      throw new UsageError(`cannot lock ${what} ${path}: ${pathTrouble(err) ?? (err as NodeJS.ErrnoException).code ?? String(err)}`, { cause: err });
    }
  }
}

/**
 * A run killed (kill -9) between writing its new lock file and linking or
 * removing it leaves `FILE.lock.PID-START-RANDOM.new`: removed once its owner is gone.
 */
async function removeDeadFresh(lock: string): Promise<void> {
  const prefix = `${basename(lock)}.`;
  for (const name of await readdir(dirname(lock)).catch(() => [] as string[])) {
    if (!name.startsWith(prefix)) continue;
    const owner = /^(\d+-\d+)-[0-9a-f]{12}\.new$/.exec(name.slice(prefix.length))?.[1];
    if (owner !== undefined && owner !== SELF && ownerIsGone(owner)) await rm(join(dirname(lock), name), { force: true }).catch(() => {});
  }
}

/** The lock is held by a live process. */
class Busy extends Error {
  constructor(readonly pid: number) {
    super(`held by pid ${pid}`);
  }
}

/** How many dead takers of a dead owner's lock in a row are taken over before giving up. */
const MAX_DEPTH = 4;

/**
 * Creates `lock` holding our pid, or throws Busy. The file appears whole (a
 * hard link to a file already written), so nobody reads a lock without its pid.
 *
 * A lock whose owner is dead is replaced by a rename over it — but only under
 * a claim, itself such a lock, named after that very lock file (inode and
 * modification time): of all the runs that saw it dead, the one that gets the
 * claim checks that the lock is still the one it saw and replaces it; the
 * others find the claim or the new lock held by a live run. Merely deleting a
 * dead lock and creating a new one would let a second run that saw the same
 * dead owner delete the first run's fresh lock.
 */
async function takeLock(lock: string, depth: number): Promise<void> {
  const fresh = `${lock}.${SELF}-${randomBytes(6).toString('hex')}.new`;
  await writeFile(fresh, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      if (await create(fresh, lock)) return;
      const seen = await holder(lock);
      if (seen === undefined) continue; // let go meanwhile: try again
      if (seen.pid !== process.pid && isAlive(seen.pid)) throw new Busy(seen.pid);
      if (depth >= MAX_DEPTH) break;
      const claim = `${lock}.${seen.id}`;
      await takeLock(claim, depth + 1); // Busy: another live run is taking it over
      try {
        if ((await holder(lock))?.id === seen.id) {
          await rename(fresh, lock);
          return;
        }
      } finally {
        await rm(claim, { force: true });
      }
    }
    throw new UsageError(`cannot lock ${lock}: it keeps reappearing`);
  } finally {
    await rm(fresh, { force: true }); // gone after a rename; after a link, the lock keeps the file
  }
}

/** Makes `lock` the file `fresh`; false when `lock` exists. */
async function create(fresh: string, lock: string): Promise<boolean> {
  try {
    await link(fresh, lock);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw err;
  }
  // A file system without hard links: create it exclusively and write the pid into it.
  try {
    await writeFile(lock, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** The pid in `lock` and the identity of that file, or undefined when there is none. */
async function holder(lock: string): Promise<{ pid: number; id: string } | undefined> {
  let fh;
  try {
    fh = await open(lock, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    // stat and read through one descriptor: both are of the same file, even if it is replaced meanwhile
    const st = await fh.stat({ bigint: true });
    const text = await fh.readFile('utf8');
    const pid = Number(text.trim());
    // Not a pid (another program's file, a write cut short): nobody alive owns it.
    return { pid: Number.isInteger(pid) && pid > 0 ? pid : 0, id: `${st.ino}-${st.mtimeNs}` };
  } finally {
    await fh.close();
  }
}

export { isAlive };
