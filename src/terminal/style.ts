import { styleText } from 'node:util';

/** The part of a stream the terminal layer looks at; a fake one in tests. */
export interface TerminalStream {
  readonly isTTY?: boolean;
  readonly columns?: number;
  /** whether colour is allowed here, when the stream says so (an in-process run's buffer); else decided below */
  readonly colour?: boolean;
  write(chunk: string): boolean | void;
}

/** The command-line switches that affect the terminal (commander's `--no-x` gives `x: false`). */
export interface TerminalFlags {
  color?: boolean;
  progress?: boolean;
  quiet?: boolean;
}

/** What the terminal layer may do on one stream. */
export interface TerminalPolicy {
  /** escape codes for colour and weight */
  color: boolean;
  /** an animated, self-rewriting progress line */
  animate: boolean;
  /** the end-of-run summary (everything but errors) */
  summary: boolean;
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Decides colour and animation from the stream and the environment, by the
 * conventions of clig.dev and no-color.org. We decide ourselves instead of
 * passing the stream to `util.styleText`: its `stream` option only exists from
 * Node 20.20 (engines allows 20.18), and it cannot know about our flags.
 *
 * Precedence: `--no-color` > `FORCE_COLOR` > `NO_COLOR`/`TERM=dumb` > TTY.
 * FORCE_COLOR is the usual way to keep colour through a pager (`| less -R`);
 * it never turns on animation, which needs a real terminal.
 */
export function terminalPolicy(stream: TerminalStream, flags: TerminalFlags, env: Env): TerminalPolicy {
  const tty = stream.isTTY === true;
  const dumb = env.TERM === 'dumb';
  const quiet = flags.quiet === true;
  return {
    color: flags.color !== false && (stream.colour ?? colorFromEnv(tty, dumb, env)),
    // A terminal that says it has no columns (some emulators, a serial console)
    // cannot hold a line redrawn in place: it would scroll a copy per frame.
    animate: tty && !dumb && !isCI(env) && flags.progress !== false && !quiet && stream.columns !== 0,
    summary: !quiet,
  };
}

function colorFromEnv(tty: boolean, dumb: boolean, env: Env): boolean {
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== '') return force !== '0' && force !== 'false';
  // no-color.org: "present and not an empty string"
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return tty && !dumb;
}

/** CI services set CI=true (or a name); CI=false/0 is how people opt out locally. */
function isCI(env: Env): boolean {
  const ci = env.CI;
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
}

export type Format = Parameters<typeof styleText>[0];

/** Styles text when the policy allows colour; plain text otherwise. */
export function paint(color: boolean, format: Format, text: string): string {
  return color ? styleText(format, text, { validateStream: false }) : text;
}
