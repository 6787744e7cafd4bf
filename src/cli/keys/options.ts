import { declare } from '../command.js';
import { type FlagsOf, option } from '../option-record.js';

const keysFile = (help: string) => option<string>({ flags: '--keys-file <file>', help, required: true });

/** `keys create`'s table: its keys file may not exist yet. */
const CREATE_OPTIONS = { keysFile: keysFile('the keys file of mailsift serve (created with mode 600 when missing)') };
/** `keys list` and `keys revoke`: a keys file that exists. */
const KEYS_FILE_OPTION = { keysFile: keysFile('the keys file of mailsift serve') };

/** What every `keys` subcommand takes. */
export type KeysFlags = FlagsOf<typeof KEYS_FILE_OPTION>;

/**
 * `mailsift keys create|list|revoke --keys-file FILE`. A whole key is printed
 * once, by `create`; `list` shows ids (a digest prefix) and a hint, and `revoke`
 * takes an id, so no key ever needs to be typed on a command line. Planned by
 * ./plan.ts, run by ./run.ts.
 */
export const KEYS = declare({
  name: 'keys',
  description: 'manage API keys for mailsift serve',
  help: {
    examples: `
Examples:
  $ mailsift keys create --keys-file keys.txt   # prints the new key once
  $ mailsift keys list --keys-file keys.txt     # ids and hints, not whole keys
  $ mailsift keys revoke 3f2a9c01d4e7 --keys-file keys.txt
A running "mailsift serve" reads the keys file at start: restart it after one.`,
  },
  subcommands: [
    declare({ name: 'create', description: 'append a new random API key to a keys file and print it once on stdout', options: CREATE_OPTIONS }),
    declare({ name: 'list', description: 'print the id and a hint of each key in a keys file (never the whole key)', options: KEYS_FILE_OPTION }),
    declare({
      name: 'revoke',
      description: 'remove the key with this id (from "keys list") from a keys file',
      args: [{ name: '<id>', help: 'the key id, or a unique prefix of it (at least 6 hex digits)' }],
      options: KEYS_FILE_OPTION,
    }),
  ],
});
