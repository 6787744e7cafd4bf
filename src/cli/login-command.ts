import { Command } from 'commander';
import { UsageError } from '../errors.js';
import { checkKey, looksLikeKey, removeStoredKey, storeKey } from './credentials.js';

/**
 * `mailsift login` / `mailsift logout`: the API key kept for later runs, so a
 * cron job needs neither a key in its environment nor one in argv. The key is
 * read from a hidden prompt on a terminal, else from stdin
 * (`mailsift login < key.txt`), and never printed.
 */
export function loginCommands(): Command[] {
  const login = new Command('login')
    .description('store the API key for later runs (hidden prompt, or stdin)')
    .addHelpText(
      'after',
      `
Examples:
  $ mailsift login              # asks for the key; nothing is shown as you type
  $ mailsift login < key.txt    # or pipe it in
Where: $XDG_CONFIG_HOME/mailsift/credentials
  (default ~/.config/mailsift/credentials), mode 600.
Lookup order: --api-key-file, MAILSIFT_API_KEY, then the stored key,
which only a run that asks for the API (a base URL, --engine api) reads.`,
    )
    .option('--force', 'store the key even when it does not look like one')
    .action(async (flags: { force?: boolean }) => {
      const text = process.stdin.isTTY ? await hiddenPrompt('API key: ') : await readAll(process.stdin);
      const key = checkKey(text);
      // A paste gone wrong would fail every later run with exit 3: said now, and never quoted (it may be a key).
      if (!looksLikeKey(key) && !flags.force) {
        throw new UsageError(
          `login: that does not look like an API key (${key.length} characters; keys are 16 or more letters, digits, - and _): nothing stored; check what was pasted, or store it anyway with --force`,
        );
      }
      const { path, warnings } = await storeKey(key);
      for (const line of warnings) process.stderr.write(`mailsift: warning: ${line}\n`);
      process.stderr.write(`mailsift: API key stored in ${path}\n`);
    });
  const logout = new Command('logout').description('remove the stored API key').action(() => {
    const path = removeStoredKey();
    process.stderr.write(path ? `mailsift: removed the API key stored in ${path}\n` : 'mailsift: no API key was stored\n');
  });
  return [login, logout];
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  stream.setEncoding('utf8');
  for await (const chunk of stream) {
    text += chunk as string;
    // a key is short: a file of anything else is not one
    if (text.length > 16_384) throw new UsageError('login: expected one key on stdin, got more than 16 KiB');
  }
  return text;
}

/** Reads a line from the terminal without echoing it; Ctrl-C or Ctrl-D gives up. */
function hiddenPrompt(prompt: string): Promise<string> {
  const stdin = process.stdin;
  return new Promise((resolve, reject) => {
    let text = '';
    const done = (err?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
      if (err) reject(err);
      else resolve(text);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return done();
        if (ch === '\u0003' || ch === '\u0004') return done(new UsageError('login: cancelled, nothing stored'));
        if (ch === '\u007f' || ch === '\b') text = text.slice(0, -1);
        else text += ch;
      }
    };
    stdin.setEncoding('utf8');
    // echo off before the prompt shows: a key typed at once is never shown
    stdin.setRawMode(true);
    process.stderr.write(prompt);
    stdin.on('data', onData);
    stdin.resume();
  });
}
