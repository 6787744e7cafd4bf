import { EXIT, MailsiftError, UsageError } from '../errors.js';

/**
 * What a file error's code means, in words: the one wording of each errno,
 * for every message about a file mailsift reads or writes. A message gives
 * the words and the code (`permission denied (EACCES)`): the words for the
 * person, the code for a search.
 */
const WORDS: Record<string, string> = {
  // the path: fixed by giving another (PATH below)
  ENOTDIR: 'a part of the path is a file, not a directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  EISDIR: 'it is a directory',
  ENAMETOOLONG: 'the name is too long',
  ELOOP: 'too many symbolic links',
  EEXIST: 'a file is in the way',
  // the disk: fixed by making room (DISK below)
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EFBIG: 'the file is larger than the file system or the file-size limit allows',
  EIO: 'an input/output error on the device',
};

/**
 * ENOENT alone means two things: what is missing is the file read, or, for a
 * file being made, a directory on its way.
 */
const MISSING = { read: 'no such file', write: 'no such directory' } as const;

/** Codes that say the path given cannot be used at all: a usage error (exit 2), like a bad flag. */
const PATH = new Set(['ENOENT', 'ENOTDIR', 'EACCES', 'EPERM', 'EROFS', 'EISDIR', 'ENAMETOOLONG', 'ELOOP']);

/** Codes that say the disk is full or failing: EXIT.ioError, with what to do. */
const DISK = new Set(['ENOSPC', 'EDQUOT', 'EFBIG', 'EIO']);

const codeOf = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code;

/** The words of a code (see WORDS), or undefined for a code without them. */
export function errnoWords(code: string, op: 'read' | 'write' = 'write'): string | undefined {
  return code === 'ENOENT' ? MISSING[op] : WORDS[code];
}

/**
 * A file error as a message says it: `permission denied (EACCES)`; a code
 * without words as itself (`EMFILE`); an error without a code by its message.
 * `op` is what was being done to the file (see MISSING).
 */
export function fileTrouble(err: unknown, op: 'read' | 'write'): string {
  const code = codeOf(err);
  const words = code === undefined ? undefined : errnoWords(code, op);
  if (words !== undefined) return `${words} (${code})`;
  return code ?? (err instanceof Error ? err.message : String(err));
}

/** What a path problem (a code of PATH) is, as fileTrouble says it, or undefined for another error. */
export function pathTrouble(err: unknown, op: 'read' | 'write' = 'write'): string | undefined {
  const code = codeOf(err);
  return code !== undefined && PATH.has(code) ? fileTrouble(err, op) : undefined;
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
  const code = codeOf(err);
  const path = pathTrouble(err);
  if (path !== undefined) return new UsageError(`cannot write ${label}: ${path}`, { cause: err });
  if (code === undefined || !DISK.has(code)) {
    return new MailsiftError(`cannot write ${label}: ${fileTrouble(err, 'write')}`, EXIT.unexpected, { cause: err });
  }
  return new MailsiftError(`cannot write ${label}: ${code} (${WORDS[code]}); make room or give another path, then run again${after}`, EXIT.ioError, {
    cause: err,
  });
}
