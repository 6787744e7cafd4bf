import { type Command, Option } from 'commander';

/**
 * Options declared once, as data (the way npm-check-updates does): a table maps
 * each flag's value name to how commander declares it, and the table's type
 * gives the typed flags object the command's action receives — no interface
 * written out again by hand.
 */
export interface OptionSpec<V> {
  readonly make: () => Option;
  /** its `--no-` twin, stored under the same key (`--bom` / `--no-bom`: true, false, or undefined when neither is given) */
  readonly negate?: () => Option;
  /** never set: carries the value's type */
  readonly value?: V;
}

/** A table entry whose value, as commander hands it over, is a `V`. */
export const spec = <V>(make: () => Option, negate?: () => Option): OptionSpec<V> => (negate ? { make, negate } : { make });

export type OptionTable = Record<string, OptionSpec<unknown>>;

/** The flags object of a command declared from `T`. */
export type FlagsOf<T extends OptionTable> = { [K in keyof T]: T[K] extends OptionSpec<infer V> ? V : never };

/**
 * Adds every option of `table` to `cmd`, in the table's order. A key that is
 * not the attribute commander stores the value under would leave that key
 * always undefined: it throws, so any test that builds the command catches it.
 */
export function addOptions(cmd: Command, table: OptionTable): Command {
  for (const [key, { make, negate }] of Object.entries(table)) {
    for (const option of negate ? [make(), negate()] : [make()]) {
      if (option.attributeName() !== key) throw new Error(`option table: ${option.flags} is stored as ${option.attributeName()}, not ${key}`);
      cmd.addOption(option);
    }
  }
  return cmd;
}
