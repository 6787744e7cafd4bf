import { UsageError } from '../../errors.js';
import type { PlanInput } from '../command.js';
import type { KeysFlags } from './options.js';

/** What a `keys` subcommand will do to its keys file. */
export type KeysPlan =
  | { action: 'create'; keysFile: string }
  | { action: 'list'; keysFile: string }
  /** `id`: lower-case hex, 6 to 12 digits */
  | { action: 'revoke'; keysFile: string; id: string };

/** A `keys` subcommand's plan; an id that cannot be one is a UsageError, before the file is read. */
export function plan({ command, args: [id], flags }: PlanInput<KeysFlags>): KeysPlan {
  const { keysFile } = flags;
  if (command === 'create' || command === 'list') return { action: command, keysFile };
  const wanted = (id as string).trim().toLowerCase();
  if (!/^[0-9a-f]{6,12}$/.test(wanted)) {
    // not quoted back: it may be a whole key, pasted by mistake
    throw new UsageError('keys revoke: expected a key id (6 to 12 hex digits), as "mailsift keys list" prints');
  }
  return { action: 'revoke', keysFile, id: wanted };
}
