import { fstatSync } from 'node:fs';
import { readlink, realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { UsageError } from '../errors.js';

/**
 * A file a run reads or writes, with the flag that named it (`input` for the
 * file read): by its path, or by a descriptor the process already holds
 * (`fd`: stdin, stdout, stderr), which counts only when it is a regular file.
 */
export interface NamedPath {
  flag: string;
  path?: string;
  fd?: number;
  /** the flag to change when this file collides, if not `flag` (a lock file's) */
  give?: string;
}

/** `-` (stdin/stdout) is no file; an absent flag names none. (A Redis cache is no path: the caller never names one.) */
const isFile = (p: NamedPath): boolean => p.fd !== undefined || (p.path !== undefined && p.path !== '-');

/** Where a path leads: the real path, and the file's identity when it is a regular file that exists. */
interface Place {
  real: string;
  /** device and inode: the same file under any name, hard links included */
  id?: string;
  /**
   * the parent directory's device and inode, and the name in it: one place
   * however the directory is reached (a bind mount gives it two real paths)
   */
  slot?: string;
  /** an existing device, pipe or directory: never replaced, so never a collision */
  special: boolean;
}

/** The process's own streams: what they may not be is the input; with each other or an output they are fine (`> log 2>&1`). */
const STREAMS = new Set(['stdout', 'stderr']);

/**
 * Refuses a run whose files overlap — an output that is the input, or two
 * outputs that are one file — before anything is read, sent or created. Paths
 * are compared by where they lead (symbolic links and `a/../` resolved, for
 * files that do not exist yet too), by their directory's device and inode and
 * their name (a bind mount), and, for files that exist, by device and inode,
 * which also catches hard links. The input, when there is one, comes first
 * (stdin by its descriptor); another output (`--report`) is one more entry.
 */
export async function refuseCollisions(named: readonly NamedPath[]): Promise<void> {
  const paths = named.filter(isFile);
  const places = await Promise.all(paths.map((p) => (p.fd !== undefined ? Promise.resolve(ofDescriptor(p.fd)) : locate(p.path!))));
  for (let i = 0; i < paths.length; i++) {
    for (let j = i + 1; j < paths.length; j++) {
      const [a, b] = [places[i]!, places[j]!];
      if (a.special || b.special || !compared(paths[i]!, paths[j]!)) continue;
      const sameId = a.id !== undefined && a.id === b.id;
      const sameSlot = a.slot !== undefined && a.slot === b.slot;
      if (sameId || sameSlot || a.real === b.real) throw collision(paths[i]!, paths[j]!, how(paths[i]!, paths[j]!, a, b));
    }
  }
}

/** stdout and stderr are compared with the input; stdout (when the rows go there) with the outputs too. */
function compared(a: NamedPath, b: NamedPath): boolean {
  if (STREAMS.has(a.flag) && STREAMS.has(b.flag)) return false;
  if (a.flag === 'stderr' || b.flag === 'stderr') return a.flag === 'input' || b.flag === 'input';
  return true;
}

/** How the input is named in a message: its path, or what stdin reads. */
const inputName = (p: NamedPath): string => (p.path !== undefined ? `the input file ${p.path}` : 'the file stdin reads');

function collision(a: NamedPath, b: NamedPath, via: string): UsageError {
  // the input listed first in a pair is always `a` (the caller puts it first)
  if (a.flag === 'input' && b.flag === 'stdout') {
    return new UsageError(`stdout is ${inputName(a)}${via}: the verdicts would be written into the input as it is read; redirect them to another file`);
  }
  if (a.flag === 'input' && b.flag === 'stderr') {
    return new UsageError(`stderr is ${inputName(a)}${via}: messages would be written into the input as it is read; redirect stderr to another file`);
  }
  if (a.flag === 'input') {
    return new UsageError(`${b.flag} ${b.path} is ${inputName(a)}${via}: writing it would destroy the input; give ${b.give ?? b.flag} another path`);
  }
  const named = (p: NamedPath): string => (p.path === undefined ? p.flag : `${p.flag} ${p.path}`);
  return new UsageError(`${named(a)} and ${named(b)} are the same file${via}; give each its own path`);
}

/** How two different spellings came to name one file, for the message. */
function how(a: NamedPath, b: NamedPath, pa: Place, pb: Place): string {
  if (a.fd !== undefined || b.fd !== undefined || a.flag === 'stdout' || b.flag === 'stdout') return ''; // /dev/stdout is always a link
  // one directory under two real paths: a bind mount, not a link
  if (pa.real !== pb.real && pa.slot !== undefined && pa.slot === pb.slot) return ' (the same directory through another mount)';
  if (pa.real !== pb.real) return ' (a hard link)';
  if (resolve(a.path!) !== pa.real || resolve(b.path!) !== pb.real) return ' (through a symbolic link)';
  return '';
}

/** A descriptor the process holds: a regular file by its identity, anything else (a terminal, a pipe) special. */
function ofDescriptor(fd: number): Place {
  try {
    const st = fstatSync(fd, { bigint: true });
    return st.isFile() ? { real: `/dev/fd/${fd}`, id: `${st.dev}:${st.ino}`, special: false } : { real: `/dev/fd/${fd}`, special: true };
  } catch {
    return { real: `/dev/fd/${fd}`, special: true }; // closed
  }
}

async function locate(path: string): Promise<Place> {
  const real = await realOf(resolve(path));
  const slot = await slotOf(real);
  const st = await stat(real, { bigint: true }).catch(() => undefined);
  if (st === undefined) return { real, slot, special: false };
  return st.isFile() ? { real, id: `${st.dev}:${st.ino}`, slot, special: false } : { real, special: true };
}

/** The directory's device and inode with the name in it, or undefined when the directory is missing. */
export async function slotOf(real: string): Promise<string | undefined> {
  const dir = await stat(dirname(real), { bigint: true }).catch(() => undefined);
  return dir === undefined ? undefined : `${dir.dev}:${dir.ino}/${basename(real)}`;
}

/** Symbolic links a path may pass through before it is taken as it stands (the kernel's own limit is 40). */
const MAX_LINKS = 40;

/**
 * The real path of `abs`, even when it does not exist yet: a dangling link is
 * followed to where it points, and a missing file or directory is its real
 * parent joined with its name.
 */
export async function realOf(abs: string, depth = 0): Promise<string> {
  try {
    return await realpath(abs);
  } catch {
    // missing, or a link to something missing: worked out below
  }
  if (depth >= MAX_LINKS) return abs;
  const target = await readlink(abs).catch(() => undefined);
  if (target !== undefined) return realOf(resolve(dirname(abs), target), depth + 1);
  const parent = dirname(abs);
  return parent === abs ? abs : join(await realOf(parent, depth + 1), basename(abs));
}
