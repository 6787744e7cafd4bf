import { declare } from '../command.js';
import { type FlagsOf, option } from '../option-record.js';

const LOGIN_OPTIONS = {
  force: option<boolean | undefined>({ flags: '--force', help: 'store the key even when it does not look like one' }),
};

export type LoginFlags = Partial<FlagsOf<typeof LOGIN_OPTIONS>>;

/**
 * `mailsift login` / `mailsift logout`: the API key kept for later runs, so a
 * cron job needs neither a key in its environment nor one in argv. The key is
 * read from a hidden prompt on a terminal, else from stdin
 * (`mailsift login < key.txt`), and never printed. Planned by ./plan.ts, run by ./run.ts.
 */
export const LOGIN = declare({
  name: 'login',
  description: 'store the API key for later runs (hidden prompt, or stdin)',
  options: LOGIN_OPTIONS,
  help: {
    examples: `
Examples:
  $ mailsift login              # asks for the key; nothing is shown as you type
  $ mailsift login < key.txt    # or pipe it in
Where: $XDG_CONFIG_HOME/mailsift/credentials
  (default ~/.config/mailsift/credentials), mode 600.
Lookup order: --api-key-file, MAILSIFT_API_KEY, then the stored key,
which only a run that asks for the API (a base URL, --engine api) reads.`,
  },
});

export const LOGOUT = declare({ name: 'logout', description: 'remove the stored API key' });
