import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm, rmdir, writeFile } from 'node:fs/promises';
import { UsageError } from '../errors.js';
import { isAlive } from './lock.js';

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
  const me = `${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFile(`${dir}/${me}`, '', { mode: 0o600 });
  } catch (err) {
    throw new UsageError(`cannot register with ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { cause: err });
  }
  let others = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (name === me) continue;
    const pid = Number(name.split('-')[0]);
    if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) others++;
    else await rm(`${dir}/${name}`, { force: true });
  }
  return {
    others,
    async release() {
      await rm(`${dir}/${me}`, { force: true });
      // the last one out tidies up; another run may have registered meanwhile
      await rmdir(dir).catch(() => {});
    },
  };
}
