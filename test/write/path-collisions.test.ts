import { closeSync, openSync } from 'node:fs';
import { link, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refuseCollisions, type NamedPath } from '../../src/write/path-collisions.js';

let dir: string;
const at = (name: string): string => join(dir, name);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mailsift-collide-'));
  await writeFile(at('in.csv'), 'email\na@example.com\n');
  await mkdir(at('a'));
  await mkdir(at('split'));
  await link(at('in.csv'), at('split/valid.csv'));
  await link(at('in.csv'), at('hard.csv'));
  await symlink('in.csv', at('soft.csv'));
  await symlink('missing.csv', at('dangling.csv'));
  await symlink('a', at('dirlink'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const refused = async (paths: NamedPath[]): Promise<string | undefined> => {
  const err = await refuseCollisions(paths).then(
    () => undefined,
    (e: unknown) => e as Error & { exitCode: number },
  );
  if (err) expect(err.exitCode).toBe(2);
  return err?.message;
};

describe('refuseCollisions', () => {
  it.each<[string, () => { flag: string; path?: string }[], RegExp]>([
    [
      '-o is the input',
      () => [
        { flag: 'input', path: at('in.csv') },
        { flag: '-o', path: at('in.csv') },
      ],
      /^-o .*in\.csv is the input file .*in\.csv: writing it would destroy the input; give -o another path$/,
    ],
    [
      'through a/../',
      () => [
        { flag: 'input', path: at('in.csv') },
        { flag: '-o', path: at('a/../in.csv') },
      ],
      /is the input file/,
    ],
    [
      'through a missing directory and ..',
      () => [
        { flag: 'input', path: at('in.csv') },
        { flag: '-o', path: at('nope/../in.csv') },
      ],
      /is the input file/,
    ],
    [
      'a symbolic link',
      () => [
        { flag: 'input', path: at('in.csv') },
        { flag: '--summary', path: at('soft.csv') },
      ],
      /\(through a symbolic link\)/,
    ],
    [
      'a hard link',
      () => [
        { flag: 'input', path: at('in.csv') },
        { flag: '-o', path: at('hard.csv') },
      ],
      /\(a hard link\)/,
    ],
    [
      'the --split dir holding the input as valid.csv',
      () => [
        { flag: 'input', path: at('in.csv') },
        { flag: '--split', path: at('split/valid.csv') },
      ],
      /^--split .*valid\.csv is the input file/,
    ],
    [
      'two outputs that do not exist yet',
      () => [
        { flag: '-o', path: at('out.csv') },
        { flag: '--summary', path: at('a/../out.csv') },
      ],
      /^-o .*out\.csv and --summary .*out\.csv are the same file; give each its own path$/,
    ],
    [
      'a new file through a linked directory',
      () => [
        { flag: '-o', path: at('a/new.csv') },
        { flag: '--summary', path: at('dirlink/new.csv') },
      ],
      /are the same file \(through a symbolic link\)/,
    ],
    [
      'a dangling link and its target',
      () => [
        { flag: '--journal', path: at('dangling.csv') },
        { flag: '--cache', path: at('missing.csv') },
      ],
      /^--journal .*dangling\.csv and --cache .*missing\.csv are the same file/,
    ],
  ])('refuses %s, naming both', async (_name, paths, why) => {
    expect(await refused(paths())).toMatch(why);
  });

  it.each<[string, () => { flag: string; path?: string }[]]>([
    [
      'distinct files',
      () => [
        { flag: 'input', path: at('in.csv') },
        { flag: '-o', path: at('out.csv') },
        { flag: '--summary', path: at('s.json') },
      ],
    ],
    [
      'stdin, stdout and absent flags',
      () => [{ flag: 'input', path: '-' }, { flag: '-o', path: '-' }, { flag: '--summary' }, { flag: '--journal', path: '-' }],
    ],
    [
      'a device written twice (not a file anything replaces)',
      () => [
        { flag: '-o', path: '/dev/null' },
        { flag: '--summary', path: '/dev/null' },
      ],
    ],
  ])('lets %s through', async (_name, paths) => {
    expect(await refused(paths())).toBeUndefined();
  });
});

describe('refuseCollisions with the descriptors the process holds', () => {
  it('stdin reading the input file is the input: an output there is refused', async () => {
    const fd = openSync(at('in.csv'), 'r');
    try {
      expect(
        await refused([
          { flag: 'input', fd },
          { flag: '-o', path: at('hard.csv') },
        ]),
      ).toMatch(/^-o .*hard\.csv is the file stdin reads: writing it would destroy the input/);
      expect(
        await refused([
          { flag: 'input', fd },
          { flag: 'stdout', fd },
        ]),
      ).toMatch(/^stdout is the file stdin reads: the verdicts would be written into the input/);
    } finally {
      closeSync(fd);
    }
  });

  it('stderr may not be the input, but may be an output or stdout (`> log 2>&1`)', async () => {
    const fd = openSync(at('in.csv'), 'r');
    try {
      expect(
        await refused([
          { flag: 'input', path: at('in.csv') },
          { flag: 'stderr', fd },
        ]),
      ).toMatch(/^stderr is the input file .*in\.csv: messages would be written into the input/);
      expect(
        await refused([
          { flag: 'input', path: at('s.json') },
          { flag: 'stdout', fd },
          { flag: 'stderr', fd },
          { flag: '--summary', path: at('in.csv') },
        ]),
      ).toMatch(/^stdout and --summary/);
      expect(
        await refused([
          { flag: 'input', path: at('s.json') },
          { flag: 'stdout', fd },
          { flag: 'stderr', fd },
        ]),
      ).toBeUndefined();
    } finally {
      closeSync(fd);
    }
  });

  it('a lock file names the flag to change', async () => {
    expect(
      await refused([
        { flag: 'input', path: at('in.csv') },
        { flag: "--journal's lock file", path: at('in.csv'), give: '--journal' },
      ]),
    ).toMatch(/^--journal's lock file .*in\.csv is the input file .*; give --journal another path$/);
  });
});
