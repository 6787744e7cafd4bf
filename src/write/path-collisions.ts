import { readlink, realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { UsageError } from '../errors.js';

/** A file a run reads or writes, with the flag that named it (`input` for the file read). */
export interface NamedPath {
  flag: string;
  path: string;
}

/** `-` (stdin/stdout) and a Redis URL are no files; an absent flag names none. */
const isFile = (p: { path?: string }): p is NamedPath => p.path !== undefined && p.path !== '-' && !/^rediss?:\/\//i.test(p.path.trim());

/** Where a path leads: the real path, and the file's identity when it is a regular file that exists. */
interface Place {
  real: string;
  /** device and inode: the same file under any name, hard links included */
  id?: string;
  /** an existing device, pipe or directory: never replaced, so never a collision */
  special: boolean;
}

/**
 * Refuses a run whose files overlap — an output that is the input, or two
 * outputs that are one file — before anything is read, sent or created. Paths
 * are compared by where they lead (symbolic links and `a/../` resolved, for
 * files that do not exist yet too) and, for files that exist, by device and
 * inode, which also catches hard links. The input, when there is one, comes
 * first; another output (`--report`) is one more entry.
 */
export async function refuseCollisions(named: readonly { flag: string; path?: string }[]): Promise<void> {
  const paths = named.filter(isFile);
  const places = await Promise.all(paths.map((p) => locate(p.path)));
  for (let i = 0; i < paths.length; i++) {
    for (let j = i + 1; j < paths.length; j++) {
      const [a, b] = [places[i]!, places[j]!];
      if (a.special || b.special) continue;
      const sameId = a.id !== undefined && a.id === b.id;
      if (sameId || a.real === b.real) throw collision(paths[i]!, paths[j]!, how(paths[i]!, paths[j]!, a, b));
    }
  }
}

function collision(a: NamedPath, b: NamedPath, via: string): UsageError {
  // the input listed first in a pair is always `a` (the caller puts it first)
  if (a.flag === 'input' && b.flag === 'stdout') {
    return new UsageError(`stdout is the input file ${a.path}${via}: the verdicts would be written into the input as it is read; redirect them to another file`);
  }
  if (a.flag === 'input') {
    return new UsageError(`${b.flag} ${b.path} is the input file ${a.path}${via}: writing it would destroy the input; give ${b.flag} another path`);
  }
  return new UsageError(`${a.flag} ${a.path} and ${b.flag} ${b.path} are the same file${via}; give each its own path`);
}

/** How two different spellings came to name one file, for the message. */
function how(a: NamedPath, b: NamedPath, pa: Place, pb: Place): string {
  if (a.flag === 'stdout' || b.flag === 'stdout') return ''; // /dev/stdout is always a link
  if (pa.real !== pb.real) return ' (a hard link)';
  if (resolve(a.path) !== pa.real || resolve(b.path) !== pb.real) return ' (through a symbolic link)';
  return '';
}

async function locate(path: string): Promise<Place> {
  const real = await realOf(resolve(path));
  const st = await stat(real, { bigint: true }).catch(() => undefined);
  if (st === undefined) return { real, special: false };
  return st.isFile() ? { real, id: `${st.dev}:${st.ino}`, special: false } : { real, special: true };
}

/** Symbolic links a path may pass through before it is taken as it stands (the kernel's own limit is 40). */
const MAX_LINKS = 40;

/**
 * The real path of `abs`, even when it does not exist yet: a dangling link is
 * followed to where it points, and a missing file or directory is its real
 * parent joined with its name.
 */
async function realOf(abs: string, depth = 0): Promise<string> {
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
