import { Command, CommanderError, type OutputConfiguration } from 'commander';
import { EXIT, MailsiftError } from '../errors.js';
import { printable } from '../format.js';
import { say } from '../terminal/say.js';
import { VERSION } from '../version.js';
import { planInput, toCommand, type Declared, type PlanContext, type PlanInput } from './command.js';
import { helpDepth, type HelpDepth } from './help.js';
import type { Io } from './io.js';
import { CHECK } from './check/options.js';
import { COMPLETION } from './completion/options.js';
import { KEYS } from './keys/options.js';
import { LOGIN, LOGOUT } from './login/options.js';
import { SERVE } from './serve/options.js';
import { VALIDATE } from './validate/options.js';

export { processIo, type Io } from './io.js';

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
 * A command wired: its declaration (./X/options.ts), and its plan (./X/plan.ts)
 * and run (./X/run.ts), loaded only when it runs: `mailsift --version` and
 * `--help` never pay for validate's or serve's modules. A folder with several
 * commands (login and logout, keys create|list|revoke) plans and runs each.
 */
interface Wired {
  readonly declared: readonly Declared<any>[];
  plan(): Promise<{ plan(input: PlanInput<any>): unknown }>;
  run(): Promise<{ run(plan: any, io: Io): Promise<number> }>;
}

const COMMANDS: readonly Wired[] = [
  { declared: [VALIDATE], plan: () => import('./validate/plan.js'), run: () => keepHeapNearLive().then(() => import('./validate/run.js')) },
  { declared: [CHECK], plan: () => import('./check/plan.js'), run: () => import('./check/run.js') },
  { declared: [SERVE], plan: () => import('./serve/plan.js'), run: () => import('./serve/run.js') },
  { declared: [KEYS], plan: () => import('./keys/plan.js'), run: () => import('./keys/run.js') },
  { declared: [LOGIN, LOGOUT], plan: () => import('./login/plan.js'), run: () => import('./login/run.js') },
  { declared: [COMPLETION], plan: () => import('./completion/plan.js'), run: () => import('./completion/run.js') },
];

/**
 * Runs the command line `argv` (node's: the program and script first) against
 * `io` and returns the exit code: a command's run returns its code, or throws
 * MailsiftError (message for the user + exit code); anything else is a bug.
 * Nothing here ends the process: bin/mailsift.js sets the exit status, so
 * that piped output is never cut off, and a test runs this in-process.
 */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  let ran: number | undefined;
  const program = createProgram(helpDepth(argv.slice(2)), { io, ran: (code) => (ran = code) });
  try {
    await program.parseAsync([...argv]);
    return ran ?? EXIT.ok;
  } catch (err) {
    return exitCodeFor(err, io);
  }
}

/**
 * The whole command tree, every flag and help text: main parses argv with it
 * (`run`: its io, and where a command's exit code goes), and `npm run docs`
 * writes docs/cli.md from it (nothing to run).
 */
export function createProgram(help: HelpDepth = 'short', run?: { io: Io; ran: (code: number) => void }): Command {
  const output = run ? outputTo(run.io) : OUTPUT;
  const program = new Command('mailsift')
    .description('Bulk email validation: CSV, text or stdin in; a verdict per row out.')
    .version(VERSION, '-V, --version')
    .showSuggestionAfterError(true)
    .addHelpText('after', EXAMPLES);
  for (const wired of COMMANDS) {
    for (const declared of wired.declared) {
      const cmd = toCommand(declared, help);
      program.addCommand(cmd);
      if (run) wire(cmd, declared, wired, program, run);
    }
  }
  // addCommand copies no settings: every command, nested ones too, exits and words errors alike
  const all = (cmd: Command): Command[] => [cmd, ...cmd.commands.flatMap(all)];
  for (const cmd of all(program)) cmd.exitOverride().configureOutput(output);
  return program;
}

/** Gives `cmd` (and its subcommands) the action that plans, then runs, through `run.io`. */
function wire(cmd: Command, declared: Declared<any>, wired: Wired, program: Command, run: { io: Io; ran: (code: number) => void }): void {
  const subcommands = declared.subcommands ?? [];
  if (subcommands.length > 0) {
    subcommands.forEach((sub, i) => wire(cmd.commands[i]!, sub, wired, program, run));
    return;
  }
  const { io } = run;
  cmd.action(async () => {
    // A command line is planned first (it opens no input, writes and sends nothing), then the plan runs.
    const plan = await (await wired.plan()).plan(planInput(cmd, declared, contextOf(io), program));
    run.ran(await (await wired.run()).run(plan, io));
  });
}

/** What planning may know of the io: the environment and which streams are terminals. */
function contextOf(io: Io): PlanContext {
  return { env: io.env, stdinIsTTY: io.stdin.isTTY === true, stdoutIsTTY: io.stdout.isTTY === true };
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
const OUTPUT: OutputConfiguration = {
  // commander's message quotes what was typed (an unknown option may hold escapes): each line printable
  outputError: (text: string, write: (s: string) => void) =>
    write(
      text
        .replace(/^error: /, 'mailsift: ')
        .split('\n')
        .map(printable)
        .join('\n'),
    ),
};

/** Help, --version and commander's errors through the io, as wide as its terminal says. */
function outputTo(io: Io): OutputConfiguration {
  const width = (s: Io['stdout']): number | undefined => (s.isTTY ? s.columns : undefined);
  return {
    ...OUTPUT,
    writeOut: (s) => void io.stdout.write(s),
    writeErr: (s) => void io.stderr.write(s),
    getOutHelpWidth: () => width(io.stdout) ?? 80,
    getErrHelpWidth: () => width(io.stderr) ?? 80,
    getOutHasColors: () => false,
    getErrHasColors: () => false,
  };
}

function exitCodeFor(err: unknown, io: Io): number {
  if (err instanceof CommanderError) {
    // --help and --version "fail" with exit code 0; usage errors were already printed.
    return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  if (err instanceof MailsiftError) {
    say(io.stderr, err.message);
    return err.exitCode;
  }
  const detail = err instanceof Error ? (err.stack ?? err.message) : String(err);
  say(io.stderr, `unexpected error: ${err instanceof Error ? err.message : String(err)}`);
  io.stderr.write(`This is a bug; please report it with the line below.\n${detail.split('\n').slice(0, 6).join('\n')}\n`);
  return EXIT.unexpected;
}
