import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/errors.js';
import { fileTrouble, writeError } from '../../src/fs/errno.js';

const errno = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`${code}: raw system text`), { code });

describe('a file that cannot be written: named as what it is, one rule for the exit code', () => {
  it.each<[string, number, string]>([
    // a path that cannot be written at all: give another (usage, exit 2)
    ['ENOENT', EXIT.usage, 'cannot write out.csv: no such directory (ENOENT)'],
    ['EACCES', EXIT.usage, 'cannot write out.csv: permission denied (EACCES)'],
    ['EROFS', EXIT.usage, 'cannot write out.csv: read-only file system (EROFS)'],
    ['EISDIR', EXIT.usage, 'cannot write out.csv: it is a directory (EISDIR)'],
    ['ENOTDIR', EXIT.usage, 'cannot write out.csv: a part of the path is a file, not a directory (ENOTDIR)'],
    // the device filled or failed while writing (EX_IOERR, exit 74)
    ['ENOSPC', EXIT.ioError, 'cannot write out.csv: ENOSPC (no space left on the device); make room or give another path, then run again'],
    ['EDQUOT', EXIT.ioError, 'cannot write out.csv: EDQUOT (disk quota exceeded); make room or give another path, then run again'],
    ['EIO', EXIT.ioError, 'cannot write out.csv: EIO (an input/output error on the device); make room or give another path, then run again'],
    // anything else is unexpected
    ['EWHATEVER', EXIT.unexpected, 'cannot write out.csv: EWHATEVER'],
  ])('%s → exit %d', (code, exit, message) => {
    const err = writeError('out.csv', errno(code));
    expect([err.exitCode, err.message]).toEqual([exit, message]);
  });
});

describe('one wording per errno, for reading and writing alike', () => {
  it.each<[string, 'read' | 'write', string]>([
    // ENOENT alone depends on what was done: the file read is missing, or a directory on the way to a new one
    ['ENOENT', 'read', 'no such file (ENOENT)'],
    ['ENOENT', 'write', 'no such directory (ENOENT)'],
    ['EACCES', 'read', 'permission denied (EACCES)'],
    ['EACCES', 'write', 'permission denied (EACCES)'],
    ['EPERM', 'write', 'operation not permitted (EPERM)'],
    ['EISDIR', 'read', 'it is a directory (EISDIR)'],
    ['EEXIST', 'write', 'a file is in the way (EEXIST)'],
    ['ENOSPC', 'write', 'no space left on the device (ENOSPC)'],
    // a code without words is itself
    ['EMFILE', 'read', 'EMFILE'],
  ])('%s (%s) → %s', (code, op, words) => {
    expect(fileTrouble(errno(code), op)).toBe(words);
  });

  it('an error without a code is its message', () => {
    expect(fileTrouble(new Error('went wrong'), 'read')).toBe('went wrong');
  });
});
