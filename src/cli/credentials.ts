import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { UsageError } from '../errors.js';

/**
 * The API key `mailsift login` stores, like `gh auth login`: one line in
 * $XDG_CONFIG_HOME/mailsift/credentials (~/.config when unset), mode 0600 in a
 * 0700 directory. It is the last place a key is looked for, after
 * --api-key-file and MAILSIFT_API_KEY. Nothing here ever prints the key.
 */
export function credentialsPath(env: NodeJS.ProcessEnv = process.env): string {
  // the XDG spec: a relative XDG_CONFIG_HOME is invalid and ignored
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith('/') ? env.XDG_CONFIG_HOME : join(env.HOME || homedir(), '.config');
  return join(base, 'mailsift', 'credentials');
}

/** The stored key, or undefined when none is stored. */
export function readStoredKey(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const path = credentialsPath(env);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw new UsageError(`${path}: cannot read the stored key (${code}); run "mailsift logout", then "mailsift login"`);
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

/** Stores `key`, replacing any stored one whole (never a half-written file); returns where. */
export function storeKey(key: string, env: NodeJS.ProcessEnv = process.env): string {
  const path = credentialsPath(env);
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    // created 0600 before the key is in it: no moment when others may read it
    writeFileSync(tmp, `${key}\n`, { mode: 0o600 });
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw new UsageError(`login: cannot write ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  return path;
}

/** Removes the stored key; returns its path, or undefined when there was none. */
export function removeStoredKey(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const path = credentialsPath(env);
  try {
    rmSync(path);
    return path;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new UsageError(`logout: cannot remove ${path} (${code})`);
  }
}
