import { readFileSync } from 'node:fs';

/**
 * Which process owns a file mailsift leaves on disk while it runs (a temp file,
 * a lock): its pid and, where the system tells, when it started, so that a pid
 * reused by an unrelated process later does not keep a dead run's leftovers
 * alive.
 */

/**
 * When process `pid` started, in clock ticks since boot (Linux: field 22 of
 * /proc/PID/stat); undefined where the system does not say or the process is gone.
 */
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

/** This process, as written into the names of the files it owns: `PID-START` (`PID-0` where the start is unknown). */
export const SELF = `${process.pid}-${startOf(process.pid) ?? '0'}`;

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

/** Whether the owner named `PID-START` (see SELF) is gone: no such pid, or the pid now belongs to a process started at another time. */
export function ownerIsGone(owner: string): boolean {
  const [pid, start] = owner.split('-').map(Number) as [number, number | undefined];
  if (!Number.isInteger(pid) || pid <= 0) return false; // not ours to judge
  if (!isAlive(pid)) return true;
  if (!start) return false;
  const now = startOf(pid);
  return now !== undefined && now !== String(start);
}
