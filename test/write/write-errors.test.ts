import { describe, expect, it } from 'vitest';
import { EXIT, writeError } from '../../src/errors.js';

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
