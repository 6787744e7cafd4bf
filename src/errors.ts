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
  sigint: 130,
  sigterm: 143,
} as const;

/**
 * An error whose message is fit for the user (one line, no stack) and which
 * carries the contract's exit code. `cli/main.ts` is the only place that turns it
 * into an exit status.
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

/** Write failures that are the disk's state, not a bug: what each means, in words. */
const DISK_TROUBLE: Record<string, string> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EFBIG: 'the file is larger than the file system or the file-size limit allows',
  EIO: 'an input/output error on the device',
};

/**
 * Path problems: the path given cannot be written (or read) at all, which the
 * user fixes by giving another — a usage error (exit 2), like a bad flag.
 */
const PATH_TROUBLE: Record<string, string> = {
  ENOENT: 'no such directory',
  ENOTDIR: 'a part of the path is a file, not a directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  EISDIR: 'it is a directory',
  ENAMETOOLONG: 'the name is too long',
  ELOOP: 'too many symbolic links',
};

/** What a path problem (see PATH_TROUBLE) is, in words with its code (`permission denied (EACCES)`), or undefined for another error. */
export function pathTrouble(err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const words = code === undefined ? undefined : PATH_TROUBLE[code];
  return words === undefined ? undefined : `${words} (${code})`;
}

/**
 * The error for a failed write to `label` (`--journal run.journal`, `out.csv`).
 * One rule for every file mailsift writes: a path that cannot be written
 * (missing directory, permission denied, read-only file system, a directory)
 * exits EXIT.usage; a full disk or a device error exits EXIT.ioError with what
 * to do; anything else stays unexpected. `after` says what a re-run keeps (e.g.
 * of a journal).
 */
export function writeError(label: string, err: unknown, after = ''): MailsiftError {
  const code = (err as NodeJS.ErrnoException).code;
  const path = pathTrouble(err);
  if (path !== undefined) return new UsageError(`cannot write ${label}: ${path}`, { cause: err });
  const trouble = code === undefined ? undefined : DISK_TROUBLE[code];
  if (trouble === undefined) {
    return new MailsiftError(`cannot write ${label}: ${code ?? (err instanceof Error ? err.message : String(err))}`, EXIT.unexpected, { cause: err });
  }
  return new MailsiftError(`cannot write ${label}: ${code} (${trouble}); make room or give another path, then run again${after}`, EXIT.ioError, {
    cause: err,
  });
}
