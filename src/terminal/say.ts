import { printable } from '../format.js';
import { paint } from './style.js';

/** Who speaks on stderr: every line of ours starts with its name, so that scripts and people grep one prefix. */
export type Speaker = 'mailsift' | 'mailsift serve';

export interface SayOptions {
  as?: Speaker;
  /** red, when the terminal's policy allows colour: why the exit code is not 0 */
  red?: boolean;
}

/**
 * One line of ours as stderr shows it, `mailsift: …`: the text made printable
 * (a file name or an API's words may hold escapes), never two lines.
 */
export function sayLine(line: string, o: SayOptions = {}): string {
  const text = printable(line);
  return `${o.as ?? 'mailsift'}: ${o.red ? paint(true, 'red', text) : text}\n`;
}

/** Says one line on `stderr`: the one way a `mailsift: …` line is printed. */
export function say(stderr: { write(chunk: string): unknown }, line: string, o?: SayOptions): void {
  stderr.write(sayLine(line, o));
}
