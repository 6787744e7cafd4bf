import { open, readFile, rm } from 'node:fs/promises';
import { UsageError } from '../errors.js';

/**
 * One run per journal at a time: two runs appending to the same journal would
 * each pay for what the other is sending, and one could cut off the other's
 * half-written last line as torn. `FILE.lock` holds the owner's pid; a lock
 * whose process is gone (a SIGKILL, a reboot) is taken over.
 */
export async function lockFile(path: string, what: string): Promise<() => Promise<void>> {
  const lock = `${path}.lock`;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fh = await open(lock, 'wx', 0o600);
      await fh.writeFile(`${process.pid}\n`);
      await fh.close();
      return async () => {
        await rm(lock, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new UsageError(`cannot lock ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { cause: err });
      }
    }
    const pid = Number((await readFile(lock, 'utf8').catch(() => '')).trim());
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
      throw new UsageError(`${what} ${path} is in use by another mailsift run (pid ${pid}); wait for it, or give another ${what} path`);
    }
    await rm(lock, { force: true }); // stale: its process is gone
  }
  throw new UsageError(`cannot lock ${what} ${path}: ${lock} keeps reappearing`);
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else — still in use.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
