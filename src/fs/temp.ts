import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { OWNER, ownerIsGone, SELF } from './owner.js';

/**
 * The files a run leaves on disk while it works — a temp file beside a target
 * (replace.ts), a workbook piped on stdin copied to the temp directory — are
 * named after their owner (owner.ts), removed when the process exits however
 * it exits, and, when a run died before it could (kill -9, a crash, a
 * reboot), removed by a later run that finds them: the one registry and the
 * one sweep of what dead runs left.
 */

/** What ends every temp file's name: `.NAME.OWNER-RANDOM.mailsift-tmp`. */
const SUFFIX = '.mailsift-tmp';
const TEMP = new RegExp(String.raw`^\..+\.(${OWNER})-[0-9a-f]{12}\.mailsift-tmp$`);

/** A new temp file's path beside `target` (in its directory, so that a rename cannot cross devices): `.NAME.OWNER-RANDOM.mailsift-tmp`. */
export function tempBeside(target: string): string {
  return join(dirname(target), `.${basename(target)}.${SELF}-${randomBytes(6).toString('hex')}${SUFFIX}`);
}

/** The owner a temp file's name carries (see tempBeside), or undefined for another name. */
export function tempOwner(name: string): string | undefined {
  return TEMP.exec(name)?.[1];
}

/** Paths to remove if the process exits before they are (a forced exit after Ctrl-C, process.exit), with whether each is a directory. */
const live = new Map<string, boolean>();
let hooked = false;

/**
 * Removes `path` (a directory with what it holds, when `tree`) when the
 * process exits, unless the returned function was called first (the path was
 * renamed into place or removed).
 */
export function removeAtExit(path: string, tree = false): () => void {
  if (!hooked) {
    hooked = true;
    process.on('exit', () => {
      for (const [p, recursive] of live) {
        try {
          rmSync(p, { recursive, force: true });
        } catch {
          // nothing more can be done on the way out
        }
      }
    });
  }
  live.set(path, tree);
  return () => void live.delete(path);
}

export interface SweepOptions {
  /**
   * Whether the owner held a kernel lock on each file while it lived (see
   * owner.ts's holdLock): only then can an owner in another PID namespace be
   * judged gone. True unless said otherwise.
   */
  locked?: boolean;
  /** entries are directories, removed with what they hold */
  tree?: boolean;
}

/**
 * Removes from `dir` what runs that are gone left there: every entry whose
 * name `ownerOf` reads an owner from (owner.ts's SELF) and whose owner is gone
 * (ownerIsGone). Best effort: a directory that cannot be listed, an entry
 * already removed or that cannot be, is no error. Resolves to the names of
 * the entries left, those of live owners, this process's own included.
 */
export async function sweep(dir: string, ownerOf: (name: string) => string | undefined = tempOwner, o: SweepOptions = {}): Promise<string[]> {
  const kept: string[] = [];
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const owner = ownerOf(name);
    if (owner === undefined) continue;
    const path = join(dir, name);
    if (owner !== SELF && (await ownerIsGone(owner, o.locked === false ? undefined : path))) {
      await rm(path, { recursive: o.tree === true, force: true }).catch(() => {});
    } else {
      kept.push(name);
    }
  }
  return kept;
}

/** A temp directory's name: `mailsift-OWNER-XXXXXX` in the system's temp directory (mkdtemp adds the six characters). */
const TEMP_DIR = new RegExp(String.raw`^mailsift-(${OWNER})-[A-Za-z0-9]{6}$`);

/**
 * A private directory of this run's in the system's temp directory (for a
 * copy of stdin), removed by `remove()` (safe to call again) or when the
 * process exits. The directories of runs that are gone are removed first; a
 * directory holds no lock, so one whose owner is in another PID namespace is
 * left be (a temp directory is seldom shared).
 */
export async function tempDirectory(): Promise<{ path: string; remove(): Promise<void> }> {
  await sweep(tmpdir(), (name) => TEMP_DIR.exec(name)?.[1], { locked: false, tree: true });
  const path = await mkdtemp(join(tmpdir(), `mailsift-${SELF}-`));
  const forget = removeAtExit(path, true);
  let removed = false;
  return {
    path,
    async remove() {
      if (removed) return;
      removed = true;
      forget();
      await rm(path, { recursive: true, force: true });
    },
  };
}
