import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../support/run-in-process.js';

// A journal or cache that is no regular file: the advice is to give a file's
// path, never to delete what is there ("delete /dev/null to start over").
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mailsift-store-path-'));
  await writeFile(join(dir, 'in.txt'), 'a@example.com\n');
  await mkdir(join(dir, 'folder'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('--journal and --cache that are no regular file', () => {
  it.each([
    ['--journal', '/dev/null'],
    ['--cache', '/dev/null'],
    ['--journal', 'folder'],
  ])('%s %s: exit 2, one line that says what to give, not to delete it', async (flag, path) => {
    const r = await runInProcess(['validate', 'in.txt', flag, path, '--engine', 'local', '--no-dns', '-q'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `mailsift: ${flag} ${path} is not a regular file: it is read back by the next run; give the path of a file (new or an earlier ${flag})\n`,
    );
    expect(r.stderr).not.toContain('delete');
  });
});
