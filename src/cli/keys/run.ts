import { appendFile, readFile } from 'node:fs/promises';
import { EXIT, UsageError } from '../../errors.js';
import { fileTrouble } from '../../fs/errno.js';
import { replaceWhole } from '../../fs/replace.js';
import { generateKey, keyHint, keyId, parseKeysFile } from '../../serve/keys.js';
import { say } from '../../terminal/say.js';
import type { Io } from '../io.js';
import type { KeysPlan } from './plan.js';

/** `mailsift keys create|list|revoke`: stdout gets a new key or the list, and nothing else. */
export async function run(plan: KeysPlan, io: Io): Promise<number> {
  const { keysFile } = plan;
  switch (plan.action) {
    case 'create': {
      const key = generateKey();
      const existing = (await readKeys(keysFile, true)) ?? '';
      // A last line without its newline would otherwise fuse with the new key.
      const sep = existing === '' || existing.endsWith('\n') ? '' : '\n';
      try {
        await appendFile(keysFile, `${sep}${key}\n`, { mode: 0o600 });
      } catch (err) {
        throw new UsageError(`--keys-file: cannot write ${keysFile}: ${fileTrouble(err, 'write')}`);
      }
      // nothing else: `KEY=$(mailsift keys create …)` gets the key and stderr stays clean
      io.stdout.write(`${key}\n`);
      return EXIT.ok;
    }
    case 'list': {
      const list = parseKeysFile((await readKeys(keysFile, false))!);
      for (const key of list) io.stdout.write(`${keyId(key)}  ${keyHint(key)}\n`);
      if (list.length === 0) say(io.stderr, `${keysFile} holds no keys`);
      return EXIT.ok;
    }
    case 'revoke': {
      const wanted = plan.id;
      const text = (await readKeys(keysFile, false))!;
      const matches = [...new Set(parseKeysFile(text).filter((k) => keyId(k).startsWith(wanted)))];
      if (matches.length === 0) throw new UsageError(`keys revoke: no key with id ${wanted} in ${keysFile}`);
      if (matches.length > 1) throw new UsageError(`keys revoke: ${wanted} matches ${matches.length} keys; give more digits`);
      const gone = matches[0]!;
      // Comments and other keys stay as they were; the file is replaced whole, never half-written.
      const kept = text.split(/(?<=\n)/).filter((line) => line.trim() !== gone);
      try {
        // the mode of the file it replaces: a keys file shared with serve's group stays readable by it
        await replaceWhole(keysFile, kept.join(''));
      } catch (err) {
        throw new UsageError(`--keys-file: cannot write ${keysFile}: ${fileTrouble(err, 'write')}`);
      }
      const left = parseKeysFile(kept.join('')).length;
      say(io.stderr, `key ${keyId(gone)} revoked; ${left} ${left === 1 ? 'key' : 'keys'} left in ${keysFile} (restart a running mailsift serve to apply)`);
      return EXIT.ok;
    }
  }
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
