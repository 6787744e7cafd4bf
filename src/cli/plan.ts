import { type Command, CommanderError } from 'commander';
import { MailsiftError, UsageError } from '../errors.js';

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

/** This process's context: what the CLI plans with. */
export function processContext(): PlanContext {
  return { env: process.env, stdinIsTTY: process.stdin.isTTY === true, stdoutIsTTY: process.stdout.isTTY === true };
}

/**
 * A command line, planned: what to do, or the one-line error the CLI would
 * print with its exit code (2 for usage), or the text --help or --version would show.
 */
export type Planned<P> = { plan: P } | { error: MailsiftError } | { shown: string };

/**
 * Plans a command line in-process, as the CLI would: `cmd` (the command's own
 * declaration, options and arguments; no action of it runs) parses `argv` (the
 * words after the command's name), then `toPlan` turns its arguments and flags
 * into a plan. Nothing is written or sent, no input opened; a flag added to the command's
 * option table needs nothing here.
 */
export async function planWith<P, F>(
  cmd: Command,
  argv: readonly string[],
  context: PlanContext,
  toPlan: (args: unknown[], flags: F) => Promise<P> | P,
): Promise<Planned<P>> {
  let shown = '';
  cmd
    .exitOverride()
    .configureOutput({ writeOut: (s) => (shown += s), writeErr: (s) => (shown += s), outputError: () => {} })
    .action(() => {});
  // commander reads an option's environment variable from process.env: take it from the context instead
  const fromEnv = cmd.options.filter((o) => o.envVar !== undefined).map((o) => ({ option: o, name: o.envVar! }));
  for (const { option } of fromEnv) option.envVar = undefined;
  try {
    cmd.parse([...argv], { from: 'user' });
  } catch (err) {
    // an option's parser may throw our own UsageError
    if (err instanceof MailsiftError) return { error: err };
    if (!(err instanceof CommanderError)) throw err;
    // --help and --version "fail" with exit code 0
    return err.exitCode === 0 ? { shown } : { error: new UsageError(err.message.replace(/^error: /, '')) };
  }
  try {
    for (const { option, name } of fromEnv) {
      const key = option.attributeName();
      const value = context.env[name];
      if (value === undefined || !(cmd.getOptionValue(key) === undefined || ['default', 'env'].includes(cmd.getOptionValueSource(key) ?? ''))) continue;
      // the event commander's own reading of the environment emits: the option's parser and precedence apply
      (cmd as unknown as NodeJS.EventEmitter).emit(`optionEnv:${option.name()}`, value);
    }
    return { plan: await toPlan(cmd.processedArgs, cmd.opts<F & object>()) };
  } catch (err) {
    if (err instanceof MailsiftError) return { error: err };
    if (err instanceof CommanderError) return { error: new UsageError(err.message.replace(/^error: /, '')) };
    throw err;
  }
}
