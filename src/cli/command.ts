import { Argument, Command, CommanderError } from 'commander';
import { MailsiftError, UsageError } from '../errors.js';
import { withHelp, type CommandHelp, type HelpDepth } from './help.js';
import { addOptions, readFlags, type FlagsOf, type Given, type OptionTable } from './option-record.js';

/**
 * Every command has the same three parts, each in its own file of the
 * command's folder (`cli/validate/`, `cli/check/`, …):
 *
 * - `options.ts`: its declaration (`Declared`): name, arguments, the table of
 *   option records (flag, parser, default, environment variable, help words)
 *   and its help texts. Data only: it opens nothing.
 * - `plan.ts`: `plan(input)`: argv's arguments and flags, with the
 *   environment, become a typed plan, or a one-line UsageError. Opens no
 *   input, writes and sends nothing, reads nothing of `process`.
 * - `run.ts`: `run(plan, io)`: does it, through `io`, and returns the exit code.
 *
 * `main.ts` wires the three, loading a command's plan and run only when it runs.
 */
export interface Declared<T extends OptionTable = OptionTable> {
  readonly name: string;
  readonly description: string;
  readonly args?: readonly ArgumentSpec[];
  /** the command's option records, in --help order (the shared tables spread in) */
  readonly options?: T;
  readonly help?: CommandHelp<keyof T & string>;
  /** subcommands (`keys create|list|revoke`), planned and run by this command's folder */
  readonly subcommands?: readonly Declared<any>[];
}

export interface ArgumentSpec {
  /** `<email>` (required) or `[input]` (optional) */
  readonly name: string;
  readonly help: string;
  readonly choices?: readonly string[];
}

/** A declaration whose table is `T` (inference helper: the table stays typed). */
export const declare = <T extends OptionTable>(d: Declared<T>): Declared<T> => d;

/**
 * What a command's plan may depend on besides its argv — passed in, never read
 * from `process` by the planning itself, so a test states it in one line.
 */
export interface PlanContext {
  /** the environment variables (flags > environment > defaults) */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** a stdin that is not a terminal is the input when no file is named */
  readonly stdinIsTTY: boolean;
  /** a binary workbook is never written to a terminal */
  readonly stdoutIsTTY: boolean;
}

/** What a command's `plan` receives: a command line parsed, nothing done yet. */
export interface PlanInput<F> {
  /** the command's name (`create` for `keys create`): a folder that holds several plans each */
  readonly command: string;
  /** its arguments, as parsed */
  readonly args: readonly unknown[];
  readonly flags: F;
  /** where each value came from (absent: its default) */
  readonly given: Given<F>;
  readonly context: PlanContext;
  /** the whole command tree, for what describes it (shell completion) */
  readonly program: Command;
}

/** The commander Command of a declaration, with its help at `depth`; no action yet. */
export function toCommand(d: Declared<any>, depth: HelpDepth = 'short'): Command {
  const cmd = new Command(d.name).description(d.description);
  for (const a of d.args ?? []) {
    const arg = new Argument(a.name, a.help);
    cmd.addArgument(a.choices ? arg.choices(a.choices) : arg);
  }
  if (d.options) addOptions(cmd, d.options);
  if (d.help) withHelp(cmd, depth, d.options ?? {}, d.help);
  for (const sub of d.subcommands ?? []) cmd.addCommand(toCommand(sub, depth));
  return cmd;
}

/** A parsed command's plan input: its arguments, and its flags with the environment applied. */
export function planInput<T extends OptionTable>(cmd: Command, d: Declared<T>, context: PlanContext, program: Command): PlanInput<FlagsOf<T>> {
  const { flags, given } = readFlags(cmd, d.options ?? ({} as T), context.env);
  return { command: d.name, args: cmd.processedArgs, flags, given, context, program };
}

/**
 * A command line, planned: what to do, or the one-line error the CLI would
 * print with its exit code (2 for usage), or the text --help or --version would show.
 */
export type Planned<P> = { plan: P } | { error: MailsiftError } | { shown: string };

/**
 * Plans a command line in-process, as the CLI does: the declaration's command
 * parses `argv` (the words after the command's name), then `plan` turns it
 * into a plan. Nothing is written or sent, no input opened; a flag added to
 * the command's option table needs nothing here.
 */
export async function planWith<T extends OptionTable, P>(
  d: Declared<T>,
  depth: HelpDepth,
  argv: readonly string[],
  context: PlanContext,
  plan: (input: PlanInput<FlagsOf<T>>) => P | Promise<P>,
): Promise<Planned<P>> {
  let shown = '';
  const cmd = toCommand(d, depth)
    .exitOverride()
    .configureOutput({ writeOut: (s) => (shown += s), writeErr: (s) => (shown += s), outputError: () => {} })
    .action(() => {});
  try {
    cmd.parse([...argv], { from: 'user' });
  } catch (err) {
    // an option's parser may throw our own UsageError
    if (err instanceof MailsiftError) return { error: err };
    if (!(err instanceof CommanderError)) throw err;
    // --help and --version "fail" with exit code 0
    return err.exitCode === 0 ? { shown } : { error: usageOf(err) };
  }
  try {
    return { plan: await plan(planInput(cmd, d, context, cmd)) };
  } catch (err) {
    if (err instanceof MailsiftError) return { error: err };
    if (err instanceof CommanderError) return { error: usageOf(err) };
    throw err;
  }
}

/** commander's own error as ours: its words, without its "error: " */
export const usageOf = (err: CommanderError): UsageError => new UsageError(err.message.replace(/^error: /, ''));
