import { randomBytes } from 'node:crypto';
import { mkdir, rm, rmdir, writeFile } from 'node:fs/promises';
import { UsageError } from '../errors.js';
import { fileTrouble } from '../fs/errno.js';
import { holdLock, OWNER, SELF } from '../fs/owner.js';
import { sweep } from '../fs/temp.js';

const ENTRY = new RegExp(String.raw`^(${OWNER})-[0-9a-f]{8}$`);

export interface Registration {
  /** other live runs using the file at the moment of registering */
  others: number;
  release(): Promise<void>;
}

/**
 * Runs that share a cache (cron jobs that overlap) each register in
 * `FILE.users/`, one entry per run named after its pid. Appending side by side
 * is safe — each batch's lines go out in one write to a file opened for
 * appending — but cutting off a torn tail or rewriting the file is not while
 * another run appends: that run's lines would be lost, and paid for again. So
 * only a run that finds itself alone may do either. Entries of runs that are
 * gone (SIGKILL, reboot) are cleared when seen.
 *
 * Registering is only sound under the cache's open lock (see openCache): two
 * runs registering at the same moment could otherwise each count the other
 * too late, or one rewrite the file while the other has just opened it.
 */
export async function registerUser(path: string, what: string): Promise<Registration> {
  const dir = `${path}.users`;
  // named after this run (fs/owner.ts), and locked while it lives: runs in other PID namespaces tell by the lock
  const me = `${SELF}-${randomBytes(4).toString('hex')}`;
  let held;
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFile(`${dir}/${me}`, '', { mode: 0o600 });
    held = await holdLock(`${dir}/${me}`);
  } catch (err) {
    throw new UsageError(`cannot register with ${what} ${path}: ${fileTrouble(err, 'write')}`, { cause: err });
  }
  // the entries of runs that are gone are removed; an older mailsift's entry is `PID-RANDOM`
  const live = await sweep(dir, (name) => ENTRY.exec(name)?.[1] ?? name.split('-')[0]!);
  const others = live.filter((name) => name !== me).length;
  return {
    others,
    async release() {
      await rm(`${dir}/${me}`, { force: true });
      await held?.close();
      // the last one out tidies up; another run may have registered meanwhile
      await rmdir(dir).catch(() => {});
    },
  };
}
