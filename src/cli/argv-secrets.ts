import { passwordOf, type RedisTarget } from '../redis/url.js';
import type { Io } from './io.js';

/** A secret to mask in the command line `ps` shows, and what to show instead. */
export interface ArgvSecret {
  text: string;
  shown: string;
}

/**
 * Masks a password given in argv (the SOCKS proxy's) in our command line as
 * `ps` shows it, as mysql does for `-p`. It only shortens the window: the
 * plan's warning still tells the user to use the environment.
 */
export function hideInArgv(io: Pick<Io, 'maskArgv'>, secret: ArgvSecret | undefined): void {
  if (secret !== undefined) io.maskArgv(secret.text, secret.shown);
}

/**
 * A Redis URL's password given on the command line (`--redis`, `--cache`) is
 * visible to every user of the machine (ps, /proc): like curl with -u, it is
 * overwritten in our argv at once. True when it was there (the caller may say
 * that the environment is safer).
 */
export function hideRedisPassword(io: Pick<Io, 'maskArgv'>, target: RedisTarget | undefined): boolean {
  return target !== undefined && passwordOf(target) !== undefined && io.maskArgv(target.url, target.shown);
}
