import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { UsageError } from '../errors.js';
import { fileTrouble } from '../fs/errno.js';
import { replaceWhole } from '../fs/replace.js';

/**
 * The API key `mailsift login` stores, like `gh auth login`: one line in
 * $XDG_CONFIG_HOME/mailsift/credentials (~/.config when unset), mode 0600 in a
 * 0700 directory. It is the last place a key is looked for, after
 * --api-key-file and MAILSIFT_API_KEY. Nothing here ever prints the key.
 *
 * The config directory may be shared or hostile (a 0777 one, a path planted by
 * another user): nothing is followed through a symbolic link, nothing but a
 * regular file is read, and a read never blocks (a FIFO or /dev/zero planted
 * at the path would hang every run).
 */
export function credentialsPath(env: NodeJS.ProcessEnv): string {
  return join(configHome(env), 'mailsift', 'credentials');
}

/** $XDG_CONFIG_HOME, or $HOME/.config (the XDG spec: a relative XDG_CONFIG_HOME is invalid and ignored) */
function configHome(env: NodeJS.ProcessEnv): string {
  return xdgConfigHome(env) ?? join(home(env), '.config');
}

const xdgConfigHome = (env: NodeJS.ProcessEnv): string | undefined =>
  env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith('/') ? env.XDG_CONFIG_HOME : undefined;
const home = (env: NodeJS.ProcessEnv): string => env.HOME || homedir();

/** A key is short: anything longer at the path is not one. */
const MAX_KEY_FILE_BYTES = 16_384;

/** Whether something is stored at the credentials path; opens nothing (the key may be unreadable, or not a file). */
export function hasStoredKey(env: NodeJS.ProcessEnv): boolean {
  try {
    lstatSync(credentialsPath(env));
    return true;
  } catch {
    return false;
  }
}

/** The stored key, or undefined when none is stored. Read only by a run that needs the key. */
export function readStoredKey(env: NodeJS.ProcessEnv): string | undefined {
  const path = credentialsPath(env);
  const again = 'run "mailsift logout", then "mailsift login"';
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO opens at once instead of waiting for a writer; O_NOFOLLOW: a link is refused (ELOOP)
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    if (code === 'ELOOP') throw new UsageError(`${path}: the stored key is a symbolic link, which mailsift never follows; ${again}`);
    throw new UsageError(`${path}: cannot read the stored key: ${fileTrouble(err, 'read')}; ${again}`);
  }
  let text: string;
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new UsageError(`${path}: the stored key is not a regular file; ${again}`);
    if (stat.size > MAX_KEY_FILE_BYTES) throw new UsageError(`${path}: holds ${stat.size} bytes, not one key; ${again}`);
    const buffer = Buffer.alloc(stat.size);
    let filled = 0;
    for (let n = 1; n > 0 && filled < buffer.length; filled += n) n = readSync(fd, buffer, filled, buffer.length - filled, null);
    text = buffer.subarray(0, filled).toString('utf8');
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`${path}: cannot read the stored key: ${fileTrouble(err, 'read')}; ${again}`);
  } finally {
    closeSync(fd);
  }
  const key = text.trim();
  if (key === '') return undefined;
  if (/\s/.test(key)) throw new UsageError(`${path}: expected one key on one line; run "mailsift login" again`);
  return key;
}

/** One key, checked: the problem in one line, never quoting what was typed (it may be a key). */
export function checkKey(text: string): string {
  const key = text.trim();
  if (key === '') throw new UsageError('login: no key given');
  if (/\s/.test(key)) throw new UsageError('login: expected one key, without spaces or line breaks');
  return key;
}

/**
 * Whether `key` looks like an API key: long enough to be one, and of the
 * characters keys are made of (base64, hex, and the separators of prefixes
 * such as `sk_live_`). A paste gone wrong (`x`, a half line, a word) does not.
 */
export function looksLikeKey(key: string): boolean {
  return key.length >= 16 && key.length <= 512 && /^[A-Za-z0-9._~+/=:-]+$/.test(key);
}

/**
 * Stores `key`, replacing any stored one whole (never a half-written file);
 * returns where, and lines to warn about (a config directory others may write).
 */
export async function storeKey(key: string, env: NodeJS.ProcessEnv): Promise<{ path: string; warnings: string[] }> {
  const path = credentialsPath(env);
  const dir = dirname(path);
  // HOME is the user's: creating a missing one (as root, nobody's /nonexistent) would put a key where no
  // one looks. XDG_CONFIG_HOME, set on purpose, is made when missing, as the XDG spec asks (0700).
  const xdg = xdgConfigHome(env);
  if (xdg === undefined && !isDirectory(home(env))) {
    throw new UsageError(`login: HOME (${home(env)}) is not an existing directory: set HOME to yours, or XDG_CONFIG_HOME to where the key should go`);
  }
  const warnings: string[] = [];
  try {
    if (xdg !== undefined) mkdirSync(xdg, { recursive: true, mode: 0o700 });
    // one level at a time below HOME: ~/.config, then mailsift
    for (const d of [configHome(env), dir]) {
      try {
        mkdirSync(d, { mode: 0o700 });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
    const dirStat = statSync(dir);
    if ((dirStat.mode & 0o022) !== 0) {
      warnings.push(`${dir} is writable by others (mode ${(dirStat.mode & 0o777).toString(8)}): they could replace the key; chmod 700 ${dir}`);
    }
    const existing = lstatOrUndefined(path);
    if (existing?.isSymbolicLink()) {
      throw new UsageError(`login: ${path} is a symbolic link, which mailsift never writes through; remove it (mailsift logout), then log in again`);
    }
    if (existing && !existing.isFile()) throw new UsageError(`login: ${path} is not a regular file; remove it, then log in again`);
    // The temp file is made with O_EXCL (a name planted in a shared directory is never opened or
    // followed) and 0600 before the key is in it (no moment when others may read it), whatever mode a
    // file there had; the rename replaces whatever name is at `path` (a link planted since included),
    // never what it points to.
    await replaceWhole(path, `${key}\n`, { mode: 0o600, keepMode: false });
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`login: cannot write ${path}: ${fileTrouble(err, 'write')}`);
  }
  return { path, warnings };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function lstatOrUndefined(path: string): ReturnType<typeof lstatSync> | undefined {
  try {
    return lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Removes the stored key; returns its path, or undefined when there was none. */
export function removeStoredKey(env: NodeJS.ProcessEnv): string | undefined {
  const path = credentialsPath(env);
  try {
    rmSync(path);
    return path;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new UsageError(`logout: cannot remove ${path}: ${fileTrouble(err, 'write')}`);
  }
}
