import { type Command, Help, Option } from 'commander';
import type { ExitMeaning } from '../errors.js';
import type { OptionTable } from './option-record.js';

/**
 * Help that fits a screen: `mailsift CMD --help` shows the common flags and
 * a few examples in one 80×24 terminal, and says where the rest is;
 * `mailsift CMD --help all` shows every flag and the reference texts (output
 * columns, --fail-on rules, exit codes, environment), as docs/cli.md does.
 * Every line of both fits 80 columns (test/cli/help.test.ts).
 */
export type HelpDepth = 'short' | 'all';

/** The width every help text is written for. */
export const HELP_WIDTH = 80;

/** `all` when the words after a command hold `--help all` (or `-h all`). */
export function helpDepth(argv: readonly string[]): HelpDepth {
  const at = argv.findIndex((a) => a === '--help' || a === '-h');
  return at >= 0 && argv[at + 1] === 'all' ? 'all' : 'short';
}

/**
 * `text` wrapped at word boundaries to `width`: the first line starts with
 * `lead`, the others with as many spaces as `lead` is long.
 */
export function wrap(lead: string, text: string, width = HELP_WIDTH): string {
  const indent = ' '.repeat(lead.length);
  const lines: string[] = [];
  let line = lead;
  let words = 0;
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (words > 0 && line.length + 1 + word.length > width) {
      lines.push(line);
      line = indent + word;
      words = 1;
    } else line = words++ === 0 ? line + word : `${line} ${word}`;
  }
  lines.push(line);
  return lines.join('\n');
}

/** The "Exit status:" block of a help text, from the one table (src/errors.ts). */
export function exitStatusHelp(rows: readonly ExitMeaning[], which: 'help' | 'check'): string {
  const lines = rows.flatMap((row) => {
    const text = row[which];
    return text === undefined ? [] : [wrap(`  ${String(row.code).padEnd(5)}`, text)];
  });
  return `Exit status:\n${lines.join('\n')}`;
}

/** What a command's help holds beside its flags. */
export interface CommandHelp<K extends string = string> {
  /**
   * The flags the short help lists, in this order, each in the few words of
   * its record's `brief` (shorter than its `help`, which --help all,
   * docs/cli.md and completion keep). Without it, the command has one help.
   */
  brief?: readonly K[];
  /** a few examples, every line within 80 columns */
  examples: string;
  /** what `--help all` adds after the options and examples: reference texts, more examples (made only then) */
  reference?: () => string;
  /** what the reference holds, for the short help's last line (default: "All flags") */
  more?: string;
}

/**
 * Gives `cmd` its help at `depth`: the short one lists only the `brief`
 * flags, in few words, then the examples and where the rest is; the whole one
 * every flag, the examples and the reference. No option is hidden (shell
 * completion and docs/cli.md list them all): only this help's listing is narrowed.
 */
export function withHelp(cmd: Command, depth: HelpDepth, table: OptionTable, texts: CommandHelp): Command {
  if (texts.brief === undefined) return cmd.addHelpText('after', `\n${texts.examples.trim()}`);
  cmd.helpOption('-h, --help', 'this help; --help all: every flag and the reference');
  const common = new Map<string, readonly [string, string]>();
  for (const key of texts.brief) {
    const record = table[key];
    if (record?.brief === undefined) throw new Error(`help: ${cmd.name()} lists ${key} in its short help, which has no brief words`);
    common.set(new Option(record.flags).long!, [record.briefTerm ?? record.flags, record.brief]);
  }
  common.set('--help', ['-h, --help [all]', 'this help; with all: every flag, and more']);
  const order = [...common.keys()];
  if (depth === 'short') {
    const base = new Help();
    cmd.configureHelp({
      // the usage line names the argument; its description is in --help all
      visibleArguments: () => [],
      visibleOptions: (c) =>
        base
          .visibleOptions(c)
          .filter((o) => o.long !== undefined && common.has(o.long))
          .sort((x, y) => order.indexOf(x.long!) - order.indexOf(y.long!)),
      optionTerm: (o) => common.get(o.long!)?.[0] ?? base.optionTerm(o),
      optionDescription: (o) => common.get(o.long!)?.[1] ?? base.optionDescription(o),
    });
  }
  cmd.addHelpText('after', `\n${texts.examples.trim()}`);
  if (depth === 'all') {
    if (texts.reference) cmd.addHelpText('after', `\n${texts.reference().trim()}`);
  } else {
    cmd.addHelpText('after', `\n${texts.more ?? 'All flags'}: mailsift ${cmd.name()} --help all, or docs/cli.md`);
  }
  return cmd;
}
