import { Command, CommanderError } from 'commander';
import { EXIT, MailsiftError } from '../errors.js';
import { completionCommand } from './completion-command.js';
import { keysCommand } from './keys-command.js';
import { loginCommands } from './login-command.js';
import { serveCommand } from './serve-command.js';
import { validateCommand } from './validate-command.js';
import { processContext } from './plan.js';
import { checkCommand, checkPlan, runCheck } from './check-command.js';
import { VERSION } from '../version.js';
import { helpDepth, type HelpDepth } from './help.js';
import { printable } from '../format.js';

/**
 * Examples shown first in `mailsift --help` (clig.dev: people read examples
 * before the option list). Each command keeps its own examples next to its
 * options, as the program does here; the README's recipes repeat these.
 */
const EXAMPLES = `
Examples:
  $ npx mailsift validate contacts.csv -o cleaned.csv
  $ source <(mailsift completion bash)                # also zsh, fish
"mailsift <command> --help": its common flags; "--help all": every flag.
`;

/**
 * The only place that sets the exit status: a command's run returns its exit
 * code, or throws MailsiftError (message for the user + exit code); anything
 * else is a bug. We set process.exitCode rather than calling process.exit so
 * that piped output is never cut off.
 */
export async function main(argv: string[]): Promise<void> {
  // A reader that goes away (`mailsift --help | head`) ends us quietly, not with
  // a stack trace; other write errors (a full disk) fail the run, and the output
  // sink, which watches stdout itself, says what could not be written.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') process.exitCode = EXIT.unexpected;
  });
  // After a hang-up (SIGHUP: the terminal or SSH session closed) writing to the
  // terminal fails with EIO: that must not end, unflushed, a run that handles
  // the hang-up as it handles SIGTERM. There is nowhere left to say it anyway.
  process.stderr.on('error', () => {});
  // Node's answer to SIGUSR1 is to open its inspector on 127.0.0.1:9229: any
  // local process could then read the API key out of this one. A listener
  // replaces that answer; the signal is ignored (a debugger is attached with
  // `node --inspect bin/mailsift.js …` on purpose instead).
  process.on('SIGUSR1', () => {});
  let ran: number | undefined;
  const program = createProgram((code) => (ran = code), helpDepth(argv.slice(2)));
  let code: number;
  try {
    await program.parseAsync(argv);
    code = ran ?? EXIT.ok;
  } catch (err) {
    code = exitCodeFor(err);
  }
  // the run's own code (74 for stdout on a full disk) is the more precise; but a failed
  // write to stdout (above) is not undone by a run that thought it went well
  if (code !== EXIT.ok || !process.exitCode) process.exitCode = code;
}

/**
 * The whole command tree, every flag and help text, without running anything:
 * main parses argv with it, and `npm run docs` writes docs/cli.md from it.
 */
export function createProgram(exited: (code: number) => void = () => {}, help: HelpDepth = 'short'): Command {
  const program = new Command('mailsift')
    .description('Bulk email validation: CSV, text or stdin in; a verdict per row out.')
    .version(VERSION, '-V, --version')
    .showSuggestionAfterError(true)
    .addHelpText('after', EXAMPLES)
    .exitOverride()
    .configureOutput(OUTPUT);
  // Each command declares its flags; what it runs is loaded only when it runs, from here,
  // so that a command's declaration and its run never import each other.
  // A command line is planned first (it opens no input, writes and sends nothing), then the plan runs.
  // A run returns its exit code, handed to `exited` (main sets it). Planning and running are
  // loaded when their command runs: `mailsift --version` never pays for validate's or serve's
  // modules (issue 32).
  program.addCommand(validateCommand(async (input, flags) => {
    const plan = await (await import('./plan-validate.js')).validatePlan(input, flags, processContext());
    const { runValidate } = await import('./run-validate.js');
    await keepHeapNearLive();
    exited(await runValidate(plan));
  }, help));
  program.addCommand(checkCommand(async (email, flags) => exited(await runCheck(checkPlan(email, flags, processContext()))), help));
  program.addCommand(serveCommand(async (flags) => {
    const plan = (await import('./plan-serve.js')).servePlan(flags, processContext());
    exited(await (await import('./run-serve.js')).runServe(plan));
  }, help));
  program.addCommand(keysCommand());
  for (const cmd of loginCommands()) program.addCommand(cmd);
  program.addCommand(completionCommand(program));
  // addCommand copies no settings: every command, nested ones too, exits and words errors alike
  const all = (cmd: Command): Command[] => [cmd, ...cmd.commands.flatMap(all)];
  for (const cmd of all(program).slice(1)) cmd.exitOverride().configureOutput(OUTPUT);
  return program;
}

/**
 * A bulk run allocates fast but keeps little alive (the batches in flight).
 * V8 would then grow its old generation with the allocation rate, and the
 * process's memory with the input's size; a small growing factor keeps the
 * heap near what is live, so memory stays flat as the input grows. Set when a
 * validate run starts, not in bin/: set before the modules load, it made every
 * start-up collect garbage more (about 50 million instructions, a tenth of
 * `node -e 0`, measured with callgrind on `mailsift --version`).
 */
async function keepHeapNearLive(): Promise<void> {
  (await import('node:v8')).default.setFlagsFromString('--heap-growing-percent=100');
}

/**
 * One prefix for every error line, ours and commander's ("error: unknown
 * option" becomes "mailsift: unknown option"): scripts and people grep one.
 */
const OUTPUT = {
  // commander's message quotes what was typed (an unknown option may hold escapes): each line printable
  outputError: (text: string, write: (s: string) => void) =>
    write(text.replace(/^error: /, 'mailsift: ').split('\n').map(printable).join('\n')),
};

function exitCodeFor(err: unknown): number {
  if (err instanceof CommanderError) {
    // --help and --version "fail" with exit code 0; usage errors were already printed.
    return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  if (err instanceof MailsiftError) {
    process.stderr.write(`mailsift: ${printable(err.message)}\n`);
    return err.exitCode;
  }
  const detail = err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.stderr.write(
    `mailsift: unexpected error: ${printable(err instanceof Error ? err.message : String(err))}\n` +
      `This is a bug; please report it with the line below.\n${detail.split('\n').slice(0, 6).join('\n')}\n`,
  );
  return EXIT.unexpected;
}
