import { type Command, InvalidArgumentError, Option } from 'commander';
import { UsageError } from '../errors.js';

/**
 * One option, declared once as data (the way npm-check-updates does): its
 * flag, help, parser, default, environment variable and the words the short
 * `--help` gives it. Commander gets an Option made from it; the flags object a
 * command's plan receives is typed from the table of records; `--help`,
 * `--help all`, docs/cli.md and shell completion all read the same record.
 */
export interface OptionRecord<V> {
  /** as commander takes it: `-o, --output <file>`, `--no-dns` */
  readonly flags: string;
  /** what `--help all` and docs/cli.md say of it */
  readonly help: string;
  /** what the short `--help` says of it, for a command that lists it there */
  readonly brief?: string;
  /** the short help's term, when the flag's own is too long for it (`--engine <api|local>`) */
  readonly briefTerm?: string;
  /** the text → typed value, or an InvalidArgumentError naming the problem in one line (exit 2) */
  readonly parse?: (text: string, previous: V | undefined) => V;
  /** the parsed value a command gets when neither the flag nor its variable is given */
  readonly default?: V;
  /** how help shows the default, when not as commander would (`30d` for 30 days in milliseconds) */
  readonly defaultShown?: string;
  /** the environment variable that stands in for an absent flag (flag > environment > default); an empty one counts as unset */
  readonly env?: string;
  /** the values help and completion offer (the parser still decides) */
  readonly choices?: readonly string[];
  /** its `--no-` twin, stored under the same key (`--bom` / `--no-bom`: true, false, or undefined when neither is given) */
  readonly negate?: { readonly flags: string; readonly help: string };
  /** left out of help (never of parsing): a flag that is there only to be refused */
  readonly hidden?: boolean;
  /** the command fails without it (`keys … --keys-file`) */
  readonly required?: boolean;
}

/** A record whose value, as the command's plan receives it, is a `V`. */
export const option = <V>(record: OptionRecord<V>): OptionRecord<V> => record;

export type OptionTable = Readonly<Record<string, OptionRecord<any>>>;

/** The flags object of a command declared from `T`. */
export type FlagsOf<T extends OptionTable> = { -readonly [K in keyof T]: T[K] extends OptionRecord<infer V> ? V : never };

/** Where a value came from: typed on the command line, or its environment variable (absent: its default). */
export type Given<F> = { -readonly [K in keyof F]?: 'flag' | 'env' };

/** The help text shown for a record: its variable named the same way everywhere. */
const helpOf = (r: OptionRecord<unknown>): string => (r.env === undefined ? r.help : `${r.help} (env: ${r.env})`);

/** The commander Options of one record: itself, and its `--no-` twin. */
export function toOptions(r: OptionRecord<unknown>): Option[] {
  const made = new Option(r.flags, helpOf(r));
  if (r.choices) made.choices(r.choices);
  // after choices(), which installs a parser of its own: ours decides
  if (r.parse) made.argParser(r.parse);
  if (r.default !== undefined) made.default(r.default, r.defaultShown);
  if (r.hidden) made.hideHelp();
  if (r.required) made.makeOptionMandatory();
  return r.negate ? [made, new Option(r.negate.flags, r.negate.help)] : [made];
}

/**
 * Adds every record of `table` to `cmd`, in the table's order. A key that is
 * not the attribute commander stores the value under would leave that key
 * always undefined: it throws, so any test that builds the command catches it.
 * Commander is never told of an environment variable: `readFlags` applies them.
 */
export function addOptions(cmd: Command, table: OptionTable): Command {
  for (const [key, record] of Object.entries(table)) {
    for (const made of toOptions(record)) {
      if (made.attributeName() !== key) throw new Error(`option table: ${made.flags} is stored as ${made.attributeName()}, not ${key}`);
      cmd.addOption(made);
    }
  }
  return cmd;
}

/**
 * The flags of a parsed command, typed from its table, with the precedence
 * flag > environment > default decided here: a record's variable, when set and
 * not empty, stands in for a flag not typed, parsed by the flag's own parser.
 * `given` says where each value came from, so that an error can blame the
 * flag or the variable the user set.
 */
export function readFlags<T extends OptionTable>(
  cmd: Command,
  table: T,
  env: Readonly<Record<string, string | undefined>>,
): { flags: FlagsOf<T>; given: Given<FlagsOf<T>> } {
  const flags: Record<string, unknown> = {};
  const given: Record<string, 'flag' | 'env'> = {};
  for (const [key, record] of Object.entries(table)) {
    const text = record.env === undefined ? undefined : env[record.env];
    if (cmd.getOptionValueSource(key) === 'cli') {
      given[key] = 'flag';
      flags[key] = cmd.getOptionValue(key);
    } else if (text !== undefined && text !== '') {
      given[key] = 'env';
      flags[key] = fromEnv(record, record.env!, text);
    } else flags[key] = cmd.getOptionValue(key);
  }
  return { flags: flags as FlagsOf<T>, given: given as Given<FlagsOf<T>> };
}

/** A variable's text through the flag's parser; a bad one blames the variable, and is not quoted (it may hold a password). */
function fromEnv(record: OptionRecord<unknown>, name: string, text: string): unknown {
  if (!record.parse) return text;
  try {
    return record.parse(text, undefined);
  } catch (err) {
    if (err instanceof InvalidArgumentError) throw new UsageError(`${name}: ${err.message}`);
    throw err;
  }
}
