import { EXIT, UsageError } from '../../errors.js';
import { say } from '../../terminal/say.js';
import { checkKey, looksLikeKey, removeStoredKey, storeKey } from '../credentials.js';
import type { InStream, Io } from '../io.js';
import type { LoginPlan } from './plan.js';

/** `mailsift login` stores the key read from a hidden prompt or stdin; `mailsift logout` removes it. */
export async function run(plan: LoginPlan, io: Io): Promise<number> {
  if (plan.action === 'logout') {
    const path = removeStoredKey(io.env);
    say(io.stderr, path ? `removed the API key stored in ${path}` : 'no API key was stored');
    return EXIT.ok;
  }
  const text = io.stdin.isTTY ? await hiddenPrompt(io, 'API key: ') : await readAll(io.stdin);
  const key = checkKey(text);
  // A paste gone wrong would fail every later run with exit 3: said now, and never quoted (it may be a key).
  if (!looksLikeKey(key) && !plan.force) {
    throw new UsageError(
      `login: that does not look like an API key (${key.length} characters; keys are 16 or more letters, digits, - and _): nothing stored; check what was pasted, or store it anyway with --force`,
    );
  }
  const { path, warnings } = await storeKey(key, io.env);
  for (const line of warnings) say(io.stderr, `warning: ${line}`);
  say(io.stderr, `API key stored in ${path}`);
  return EXIT.ok;
}

async function readAll(stream: InStream): Promise<string> {
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
function hiddenPrompt(io: Io, prompt: string): Promise<string> {
  const { stdin, stderr } = io;
  return new Promise((resolve, reject) => {
    let text = '';
    const done = (err?: Error) => {
      stdin.setRawMode?.(false);
      stdin.pause();
      stdin.off('data', onData);
      stderr.write('\n');
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
    stdin.setRawMode?.(true);
    stderr.write(prompt);
    stdin.on('data', onData);
    stdin.resume();
  });
}
