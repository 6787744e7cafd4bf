import { spawn } from 'node:child_process';
import { accessSync, constants, readFileSync, readlinkSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { systemClock } from '../time/clock.js';

/**
 * Which process owns a file mailsift leaves on disk while it runs (a temp
 * file, a lock, a registration), and whether that owner is gone: the one
 * place that tells one run from another.
 *
 * A pid alone does not: it is reused, and it is only a number within its PID
 * namespace — two containers sharing a folder both have a pid 1. So an owner
 * is named `PID-START-NS`: the pid, when it started (a pid used again later
 * does not keep a dead run's leftovers alive), and the inode of its PID
 * namespace (/proc/self/ns/pid). An owner in this namespace is judged by its
 * pid and start, as before; one in another namespace cannot be seen from
 * here, so the file itself must tell: its owner holds a kernel lock on it
 * (flock(2)), which the kernel releases when the owner dies, however it dies
 * and wherever it ran. Node has no flock() (nor fcntl's F_OFD_SETLK), so the
 * lock is taken by util-linux's flock(1) on a descriptor handed to it: the
 * lock belongs to the open file description, which this process goes on
 * holding after flock(1) exits. A name ending in `u` is an owner that could
 * not lock (no flock(1) on its PATH): in another namespace it is never judged
 * gone. Older names (`PID-START`) are judged by pid and start alone.
 */

/** When process `pid` started, in clock ticks since boot (Linux: field 22 of /proc/PID/stat); undefined where the system does not say or the process is gone. */
export function startOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the command name (field 2) is in parentheses and may hold spaces: count from after it
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19];
  } catch {
    return undefined;
  }
}

/** The inode of this process's PID namespace (`pid:[4026531836]`), `0` where the system does not say. */
function namespaceOf(): string {
  try {
    return /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))?.[1] ?? '0';
  } catch {
    return '0';
  }
}

/** util-linux's flock(1) (BusyBox's too), where it is on the PATH: looked for once, with a few stat calls and no process started. */
const FLOCK: string | undefined = (() => {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const path = join(dir, 'flock');
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  return undefined;
})();

const NAMESPACE = namespaceOf();

/** This process, as written into the names of the files it owns: `PID-START-NS` (`u` after NS when it cannot lock). */
export const SELF = `${process.pid}-${startOf(process.pid) ?? '0'}-${NAMESPACE}${FLOCK ? '' : 'u'}`;

/** An owner's name in a file name: SELF's form, or an older mailsift's `PID-START`. For regular expressions. */
export const OWNER = String.raw`\d+-\d+(?:-\d+u?)?`;

export function isAlive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else — still in use.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** How old an unlocked file of an owner in another namespace must be to be taken as abandoned: its owner locks it just after creating it. */
const LOCK_GRACE_MS = 5000;

/**
 * Whether the owner named `owner` (see SELF) is gone. `file` is the file it
 * owns: for an owner in another PID namespace, a file it no longer holds a
 * lock on (and not just created: `graceMs`, 0 for a file locked before it
 * appeared under its name) is abandoned. Without `file`, or where it cannot be
 * told, an owner in another namespace is not gone: a leftover of an unknown
 * owner is removed only when it is clearly abandoned.
 */
export async function ownerIsGone(owner: string, file?: string, graceMs = LOCK_GRACE_MS): Promise<boolean> {
  const m = /^(\d+)-(\d+)(?:-(\d+)(u?))?$/.exec(owner);
  if (!m) {
    // a bare pid (an older lock file's content): this namespace's, as it was written; no pid, nobody's
    const pid = Number(owner);
    return !(Number.isInteger(pid) && pid > 0) || !isAlive(pid);
  }
  const [, pidText, start, ns, unlocked] = m;
  const pid = Number(pidText);
  if (pid <= 0) return false; // not ours to judge
  if (ns === undefined || ns === NAMESPACE || ns === '0' || NAMESPACE === '0') {
    if (!isAlive(pid)) return true;
    if (start === '0') return false;
    const now = startOf(pid);
    return now !== undefined && now !== start;
  }
  // another PID namespace: its pids are not ours to look up
  if (unlocked || file === undefined) return false;
  return (await lockHeld(file)) === false && (graceMs === 0 || (await ageOf(file)) >= graceMs);
}

/** An owner as a person reads it: `pid 123`, or `pid 1 in another PID namespace`. */
export function describeOwner(owner: string): string {
  const [pid, , ns] = owner.split('-');
  const elsewhere = ns !== undefined && ns.replace(/u$/, '') !== NAMESPACE;
  return `pid ${pid}${elsewhere ? ' in another PID namespace' : ''}`;
}

async function ageOf(file: string): Promise<number> {
  const st = await stat(file).catch(() => undefined);
  return st === undefined ? 0 : systemClock.now() - st.mtimeMs;
}

/**
 * Takes the kernel lock on the file open as `fd` (an exclusive flock(2) on its
 * open file description), which this process then holds until it closes the
 * descriptor or dies. False when it could not (no flock(1), or held already).
 */
export function lockDescriptor(fd: number): Promise<boolean> {
  if (!FLOCK) return Promise.resolve(false);
  return new Promise((resolve) => {
    // the descriptor is handed on as the child's fd 3: the same open file description
    const child = spawn(FLOCK, ['-x', '-n', '3'], { stdio: ['ignore', 'ignore', 'ignore', fd] });
    child.once('error', () => resolve(false));
    child.once('exit', (code) => resolve(code === 0));
  });
}

/**
 * Whether a process holds the kernel lock on `file`: undefined where it cannot
 * be told. Tried on a description of our own, closed again at once. Only a
 * regular file is one of ours: what else bears a leftover's name (a FIFO, a
 * link, planted in a shared directory such as /tmp) is opened without
 * blocking or following and cannot be told — an open that waits for a FIFO's
 * writer would hang the run.
 */
async function lockHeld(file: string): Promise<boolean | undefined> {
  if (!FLOCK) return undefined;
  let fh;
  try {
    fh = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    if (!(await fh.stat()).isFile()) return undefined;
    return !(await lockDescriptor(fh.fd));
  } finally {
    await fh.close();
  }
}

/**
 * Holds the kernel lock on `path` for as long as the returned handle is open
 * (see lockDescriptor): what tells a run in another PID namespace that the
 * file's owner is alive. Undefined when no lock could be taken (the owner is
 * then named with `u`, see SELF).
 */
export async function holdLock(path: string): Promise<{ close(): Promise<void> } | undefined> {
  if (!FLOCK) return undefined;
  const fh = await open(path, 'r').catch(() => undefined);
  if (!fh) return undefined;
  if (await lockDescriptor(fh.fd)) return { close: () => fh.close() };
  await fh.close();
  return undefined;
}
