import { Command, CommanderError } from 'commander';
import { EXIT, MailsiftError } from '../errors.js';
import { checkCommand } from './check-command.js';
import { keysCommand } from './keys-command.js';
import { serveCommand } from './serve-command.js';
import { validateCommand } from './validate-command.js';
import { VERSION } from '../version.js';
import { PROGRAM_EXAMPLES } from '../terminal/help.js';

/**
 * The only place that turns errors into exit statuses. Commands throw
 * MailsiftError (message for the user + exit code); anything else is a bug.
 * We set process.exitCode rather than calling process.exit so that piped output
 * is never cut off.
 */
export async function main(argv: string[]): Promise<void> {
  // A reader that goes away (`mailsift --help | head`) ends us quietly, not with
  // a stack trace; other write errors (a full disk) fail the run, and the output
  // sink, which watches stdout itself, says what could not be written.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') process.exitCode = EXIT.unexpected;
  });
  const program = new Command('mailsift')
    .description('Bulk email validation: CSV, text or stdin in; a verdict per row out.')
    .version(VERSION, '-V, --version')
    .showSuggestionAfterError(true)
    .addHelpText('before', PROGRAM_EXAMPLES)
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(text) });
  program.addCommand(validateCommand());
  program.addCommand(checkCommand());
  program.addCommand(serveCommand());
  program.addCommand(keysCommand());
  for (const cmd of program.commands) cmd.exitOverride();

  try {
    await program.parseAsync(argv);
  } catch (err) {
    process.exitCode = exitCodeFor(err);
  }
}

function exitCodeFor(err: unknown): number {
  if (err instanceof CommanderError) {
    // --help and --version "fail" with exit code 0; usage errors were already printed.
    return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  if (err instanceof MailsiftError) {
    process.stderr.write(`mailsift: ${err.message}\n`);
    return err.exitCode;
  }
  const detail = err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.stderr.write(
    `mailsift: unexpected error: ${err instanceof Error ? err.message : String(err)}\n` +
      `This is a bug; please report it with the line below.\n${detail.split('\n').slice(0, 6).join('\n')}\n`,
  );
  return EXIT.unexpected;
}
