/** Exit codes: the contract with scripts and cron jobs (the README's table, docs/output.md); never change one. */
export const EXIT = {
  ok: 0,
  unexpected: 1,
  usage: 2,
  auth: 3,
  rowErrors: 4,
  failOn: 5,
  /** a write failed for want of room or a device error (EX_IOERR of sysexits.h) */
  ioError: 74,
  /** 128 + the signal's number, each with SIGTERM's clean-up: the terminal or SSH session closed */
  sighup: 129,
  sigint: 130,
  /** Ctrl+Backslash */
  sigquit: 131,
  sigusr2: 140,
  sigalrm: 142,
  sigterm: 143,
} as const;

/**
 * An error whose message is fit for the user (one line, no stack) and which
 * carries the contract's exit code. `cli/main.ts` is the only place that turns it
 * into an exit code (which bin/mailsift.js makes the process's exit status).
 */
export class MailsiftError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'MailsiftError';
  }
}

export class UsageError extends MailsiftError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, EXIT.usage, options);
    this.name = 'UsageError';
  }
}

/**
 * A workbook that cannot be read: not a sound zip, not a spreadsheet, or past
 * one of the reader's limits (which the message names). Exit 2, like any bad input.
 */
export class XlsxError extends UsageError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'XlsxError';
  }
}

/** The server refused the API key (401/403). Never carries the key. */
export class AuthError extends MailsiftError {
  constructor(message: string) {
    super(message, EXIT.auth);
    this.name = 'AuthError';
  }
}

/**
 * What each exit code means, the one source of every place that lists them:
 * `help` for `mailsift validate --help all` (and `check` for `check --help
 * all`, where it applies), `meaning` and `todo` for the tables of README.md
 * and docs/output.md, which `npm run docs` writes (test/docs/cli-docs.test.ts
 * fails while they differ).
 */
export interface ExitMeaning {
  readonly code: number;
  readonly help: string;
  /** for `mailsift check`, when the code applies to it */
  readonly check?: string;
  readonly meaning: string;
  readonly todo: string;
}

export const EXIT_MEANINGS: readonly ExitMeaning[] = [
  {
    code: EXIT.ok,
    help: 'every row has a verdict',
    check: 'a verdict was printed (whatever its status)',
    meaning: 'every row has a verdict (and no `--fail-on` rule holds)',
    todo: '—',
  },
  {
    code: EXIT.unexpected,
    help: 'an unexpected error (a bug: please report it)',
    check: 'an unexpected error (a bug: please report it)',
    meaning: 'unexpected error (a bug)',
    todo: 'report it with the lines printed',
  },
  {
    code: EXIT.usage,
    help: 'usage or input error (bad flag, unreadable file, no address column, an output that is the input or another output, a path that cannot be written)',
    check: 'usage error (a bad flag or value)',
    meaning:
      'usage or input error: bad flag or `--fail-on` rule, unreadable file, no address column, a text file without addresses or a binary file (the wrong file), malformed CSV, a row wider than the header found after the output began, invalid UTF-8, empty input (a header alone is not: exit 0 with a notice), an output that is the input or another output, an output path that cannot be written',
    todo: 'read the one-line message',
  },
  {
    code: EXIT.auth,
    help: 'the API refused the key, or the API is configured and no key was found',
    check: 'the API refused the key, or the API is configured and no key was found',
    meaning: 'the API refused the key (401/403), or the API is configured (a base URL, or `--engine api`) and no key was found',
    todo: 'check `MAILSIFT_API_KEY` / `--api-key-file` / `mailsift login`',
  },
  {
    code: EXIT.rowErrors,
    help: "finished, but some rows carry an error, or the run's own means failed for some rows (DNS unusable, port 25 blocked): the causes are printed",
    check: 'no verdict could be obtained (the error is printed)',
    meaning:
      "finished, but some rows have no verdict (`error` column set), or the run's own means failed for some rows (the DNS resolver unusable; outbound SMTP judged blocked or the SMTP proxy failing, with `--smtp`): said on stderr even with `--quiet`, and those rows are not journaled or cached as final",
    todo: 'read the cause lines printed after the summary: fix a wrong URL, key or TLS setting first; for a failing or slow API, or DNS or port 25 that failed, re-run with the same `--journal`: only those rows are checked again',
  },
  {
    code: EXIT.failOn,
    help: 'finished, but a --fail-on rule holds',
    meaning: 'finished, but a `--fail-on` rule holds (e.g. `invalid>5%`)',
    todo: 'look at the list; the line before the exit says which rule',
  },
  {
    code: EXIT.ioError,
    help: 'a disk full (or quota, file-size limit, I/O error) writing an output or the journal',
    meaning:
      'a write failed for want of room or a device error (`ENOSPC`, `EDQUOT`, `EFBIG`, `EIO`) on the output, `--summary`, `--journal` or `--cache` (`EX_IOERR` of sysexits.h, as mail tools use); a path that cannot be written at all (missing directory, permission denied, read-only file system, a directory) is exit 2',
    todo: 'make room or give another path, and run again; with `--journal` the re-run pays only for what the journal did not record',
  },
  {
    code: EXIT.sigint,
    help: 'interrupted (Ctrl-C) after flushing the journal (an existing output is left as it was)',
    check: 'interrupted (Ctrl-C)',
    meaning: 'interrupted (Ctrl-C) after flushing the journal, and the output so far where no output file was (an existing one is left as it was)',
    todo: 're-run with the same `--journal` to finish',
  },
  {
    code: EXIT.sigterm,
    help: 'terminated (SIGTERM), the same clean-up as 130',
    check: 'terminated (SIGTERM)',
    meaning: 'terminated (SIGTERM), same clean-up as 130',
    todo: 'as for 130',
  },
  ...(
    [
      [EXIT.sighup, 'SIGHUP', ' (the terminal or SSH session closed)'],
      [EXIT.sigquit, 'SIGQUIT', ' (Ctrl+Backslash)'],
      [EXIT.sigusr2, 'SIGUSR2', ''],
      [EXIT.sigalrm, 'SIGALRM', ''],
    ] as const
  ).map(([code, name, why]) => ({
    code,
    help: `terminated by ${name}${why}, the same clean-up as 143`,
    check: `terminated (${name})`,
    meaning: `terminated by ${name}${why}, same clean-up as 143 (128 + the signal's number)`,
    todo: 'as for 130',
  })),
].sort((a, b) => a.code - b.code);
