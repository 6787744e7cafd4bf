import { randomBytes } from 'node:crypto';
import { link, open, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { MailsiftError, UsageError } from '../errors.js';
import { fileTrouble } from '../fs/errno.js';
import { describeOwner, holdLock, OWNER, ownerIsGone, SELF } from '../fs/owner.js';
import { sweep } from '../fs/temp.js';
import { systemClock, type Clock } from '../time/clock.js';
import { sleep } from '../time/waits.js';

export interface LockOptions {
  /** wait this long for a live owner to let go, instead of refusing at once */
  waitMs?: number;
  /** what that wait is timed on (the real clock by default) */
  clock?: Clock;
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
  const clock = o.clock ?? systemClock;
  const deadline = clock.now() + (o.waitMs ?? 0);
  await removeDeadFresh(lock);
  for (;;) {
    try {
      const held = await takeLock(lock, 0);
      return async () => {
        await rm(lock, { force: true });
        await held?.close();
      };
    } catch (err) {
      if (err instanceof Busy) {
        if (clock.now() < deadline) {
          await sleep(clock, 25);
          continue;
        }
        throw new UsageError(`${what} ${path} is in use by another mailsift run (${err.who}); wait for it, or give another ${what} path`);
      }
      if (err instanceof MailsiftError) throw err;
      throw new UsageError(`cannot lock ${what} ${path}: ${fileTrouble(err, 'write')}`, { cause: err });
    }
  }
}

const FRESH = new RegExp(String.raw`^(${OWNER})-[0-9a-f]{12}\.new$`);

/**
 * A run killed (kill -9) between writing its new lock file and linking or
 * removing it leaves `FILE.lock.PID-START-RANDOM.new`: removed once its owner is gone.
 */
async function removeDeadFresh(lock: string): Promise<void> {
  const prefix = `${basename(lock)}.`;
  await sweep(dirname(lock), (name) => (name.startsWith(prefix) ? FRESH.exec(name.slice(prefix.length))?.[1] : undefined));
}

/** The lock is held by a live process. */
class Busy extends Error {
  /** the owner, as a person reads it: `pid 123`, or `pid 1 in another PID namespace` */
  readonly who: string;
  constructor(owner: string) {
    super(`held by ${describeOwner(owner)}`);
    this.who = describeOwner(owner);
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
async function takeLock(lock: string, depth: number): Promise<Held> {
  const fresh = `${lock}.${SELF}-${randomBytes(6).toString('hex')}.new`;
  await writeFile(fresh, `${SELF}\n`, { flag: 'wx', mode: 0o600 });
  // The kernel lock on the file, held for as long as the lock is ours: how a run in
  // another PID namespace, which cannot look our pid up, tells that we live (fs/owner.ts).
  // Taken before the file becomes the lock: never a lock without it.
  const held = await holdLock(fresh);
  let placed = false;
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      if (await create(fresh, lock)) return ((placed = true), held);
      const seen = await holder(lock);
      if (seen === undefined) continue; // let go meanwhile: try again
      // (a lock file is locked before it appears under its name: no grace for a fresh one)
      if (seen.owner !== SELF && !(await ownerIsGone(seen.owner, lock, 0))) throw new Busy(seen.owner);
      if (depth >= MAX_DEPTH) break;
      const claim = `${lock}.${seen.id}`;
      const claimed = await takeLock(claim, depth + 1); // Busy: another live run is taking it over
      try {
        if ((await holder(lock))?.id === seen.id) {
          await rename(fresh, lock);
          return ((placed = true), held);
        }
      } finally {
        await rm(claim, { force: true });
        await claimed?.close();
      }
    }
    throw new UsageError(`cannot lock ${lock}: it keeps reappearing`);
  } finally {
    await rm(fresh, { force: true }); // gone after a rename; after a link, the lock keeps the file
    if (!placed) await held?.close();
  }
}

/** The kernel lock a lock file is held by (see holdLock), when one could be taken. */
type Held = { close(): Promise<void> } | undefined;

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
  // A file system without hard links: create it exclusively and write the owner into it
  // (no kernel lock on it then: a run in another PID namespace takes this owner for alive).
  try {
    await writeFile(lock, `${SELF.replace(/u?$/, 'u')}\n`, { flag: 'wx', mode: 0o600 });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** The owner in `lock` (see fs/owner.ts; an older mailsift wrote its pid) and the identity of that file, or undefined when there is none. */
async function holder(lock: string): Promise<{ owner: string; id: string } | undefined> {
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
    const text = (await fh.readFile('utf8')).trim();
    // Neither an owner nor a pid (another program's file, a write cut short): nobody alive owns it.
    const owner = new RegExp(`^(?:${OWNER}|\\d+)$`).test(text) ? text : '0';
    return { owner, id: `${st.ino}-${st.mtimeNs}` };
  } finally {
    await fh.close();
  }
}
