import { appendFile, readFile } from 'node:fs/promises';
import { Command } from 'commander';
import { UsageError } from '../errors.js';
import { generateKey } from '../serve/keys.js';

/** `mailsift keys create --keys-file FILE`: a new key for `mailsift serve`, shown once. */
export function keysCommand(): Command {
  const keys = new Command('keys').description('manage API keys for mailsift serve');
  keys
    .command('create')
    .description('append a new random API key to a keys file and print it once on stdout')
    .requiredOption('--keys-file <file>', 'the keys file (created with mode 600 when missing)')
    // main.ts overrides exits only on top-level commands; usage errors here must exit 2 too.
    .exitOverride()
    .action(async (flags: { keysFile: string }) => {
      const key = generateKey();
      let existing = '';
      try {
        existing = await readFile(flags.keysFile, 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
          throw new UsageError(`--keys-file: cannot read ${flags.keysFile} (${(err as NodeJS.ErrnoException).code})`);
        }
      }
      // A last line without its newline would otherwise fuse with the new key.
      const sep = existing === '' || existing.endsWith('\n') ? '' : '\n';
      try {
        await appendFile(flags.keysFile, `${sep}${key}\n`, { mode: 0o600 });
      } catch (err) {
        throw new UsageError(`--keys-file: cannot write ${flags.keysFile} (${(err as NodeJS.ErrnoException).code})`);
      }
      process.stdout.write(`${key}\n`);
    });
  return keys;
}
