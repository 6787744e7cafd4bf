import { appendFile, readFile } from 'node:fs/promises';
import { Command } from 'commander';
import { UsageError } from '../errors.js';
import { fileTrouble } from '../fs/errno.js';
import { replaceWhole } from '../fs/replace.js';
import { generateKey, keyHint, keyId, parseKeysFile } from '../serve/keys.js';

const KEYS_FILE = ['--keys-file <file>', 'the keys file of mailsift serve'] as const;

/**
 * `mailsift keys create|list|revoke --keys-file FILE`. A whole key is printed
 * once, by `create`; `list` shows ids (a digest prefix) and a hint, and `revoke`
 * takes an id, so no key ever needs to be typed on a command line.
 */
export function keysCommand(): Command {
  const keys = new Command('keys')
    .description('manage API keys for mailsift serve')
    .addHelpText(
      'after',
      `
Examples:
  $ mailsift keys create --keys-file keys.txt   # prints the new key once
  $ mailsift keys list --keys-file keys.txt     # ids and hints, not whole keys
  $ mailsift keys revoke 3f2a9c01d4e7 --keys-file keys.txt
A running "mailsift serve" reads the keys file at start: restart it after one.`,
    );
  keys
    .command('create')
    .description('append a new random API key to a keys file and print it once on stdout')
    .requiredOption(KEYS_FILE[0], `${KEYS_FILE[1]} (created with mode 600 when missing)`)
    .action(async (flags: { keysFile: string }) => {
      const key = generateKey();
      const existing = (await readKeys(flags.keysFile, true)) ?? '';
      // A last line without its newline would otherwise fuse with the new key.
      const sep = existing === '' || existing.endsWith('\n') ? '' : '\n';
      try {
        await appendFile(flags.keysFile, `${sep}${key}\n`, { mode: 0o600 });
      } catch (err) {
        throw new UsageError(`--keys-file: cannot write ${flags.keysFile}: ${fileTrouble(err, 'write')}`);
      }
      // nothing else: `KEY=$(mailsift keys create …)` gets the key and stderr stays clean
      process.stdout.write(`${key}\n`);
    });
  keys
    .command('list')
    .description('print the id and a hint of each key in a keys file (never the whole key)')
    .requiredOption(...KEYS_FILE)
    .action(async (flags: { keysFile: string }) => {
      const list = parseKeysFile((await readKeys(flags.keysFile, false))!);
      for (const key of list) process.stdout.write(`${keyId(key)}  ${keyHint(key)}\n`);
      if (list.length === 0) process.stderr.write(`mailsift: ${flags.keysFile} holds no keys\n`);
    });
  keys
    .command('revoke')
    .description('remove the key with this id (from "keys list") from a keys file')
    .argument('<id>', 'the key id, or a unique prefix of it (at least 6 hex digits)')
    .requiredOption(...KEYS_FILE)
    .action(async (id: string, flags: { keysFile: string }) => {
      const wanted = id.trim().toLowerCase();
      if (!/^[0-9a-f]{6,12}$/.test(wanted)) {
        // not quoted back: it may be a whole key, pasted by mistake
        throw new UsageError('keys revoke: expected a key id (6 to 12 hex digits), as "mailsift keys list" prints');
      }
      const text = (await readKeys(flags.keysFile, false))!;
      const matches = [...new Set(parseKeysFile(text).filter((k) => keyId(k).startsWith(wanted)))];
      if (matches.length === 0) throw new UsageError(`keys revoke: no key with id ${wanted} in ${flags.keysFile}`);
      if (matches.length > 1) throw new UsageError(`keys revoke: ${wanted} matches ${matches.length} keys; give more digits`);
      const gone = matches[0]!;
      // Comments and other keys stay as they were; the file is replaced whole, never half-written.
      const kept = text.split(/(?<=\n)/).filter((line) => line.trim() !== gone);
      try {
        // the mode of the file it replaces: a keys file shared with serve's group stays readable by it
        await replaceWhole(flags.keysFile, kept.join(''));
      } catch (err) {
        throw new UsageError(`--keys-file: cannot write ${flags.keysFile}: ${fileTrouble(err, 'write')}`);
      }
      const left = parseKeysFile(kept.join('')).length;
      process.stderr.write(
        `mailsift: key ${keyId(gone)} revoked; ${left} ${left === 1 ? 'key' : 'keys'} left in ${flags.keysFile}` +
          ' (restart a running mailsift serve to apply)\n',
      );
    });
  return keys;
}

async function readKeys(path: string, missingOk: boolean): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && missingOk) return undefined;
    throw new UsageError(`--keys-file: cannot read ${path}: ${fileTrouble(err, 'read')}`);
  }
}
