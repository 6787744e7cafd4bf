import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SELF, startOf } from '../../src/fs/owner.js';
import { sweep, tempBeside, tempDirectory, tempOwner } from '../../src/fs/temp.js';

// The one sweep of what dead runs left, over names that carry their owner (owner.ts).
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mailsift-temp-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const parent = `${process.ppid}-${startOf(process.ppid) ?? '0'}`;
const DEAD = '4194303-12345'; // beyond any pid in use here

describe('temp names', () => {
  it('a temp file sits beside its target, hidden, named after this run', () => {
    const path = tempBeside(join(dir, 'out.csv'));
    expect(path.startsWith(join(dir, '.out.csv.'))).toBe(true);
    expect(tempOwner(path.slice(dir.length + 1))).toBe(SELF);
    expect(tempOwner('out.csv')).toBeUndefined();
  });
});

describe('sweep', () => {
  it('removes the entries of dead owners, keeps live ones and names it does not read, and says which live', async () => {
    const name = (owner: string): string => `.out.csv.${owner}-0123456789ab.mailsift-tmp`;
    for (const owner of [DEAD, parent, SELF]) await writeFile(join(dir, name(owner)), 'partial');
    await writeFile(join(dir, 'out.csv'), 'kept');
    const live = await sweep(dir);
    expect(live.sort()).toEqual([name(parent), name(SELF)].sort());
    expect((await readdir(dir)).sort()).toEqual(['out.csv', name(parent), name(SELF)].sort());
  });

  it('takes the names another file kind gives its owner, and removes directories whole when told', async () => {
    await mkdir(join(dir, `mailsift-${DEAD}-abcdef`));
    await writeFile(join(dir, `mailsift-${DEAD}-abcdef`, 'input.xlsx'), 'zip');
    await mkdir(join(dir, `mailsift-${parent}-abcdef`));
    const owner = (n: string): string | undefined => /^mailsift-(\d+-\d+)-\w{6}$/.exec(n)?.[1];
    expect(await sweep(dir, owner, { locked: false, tree: true })).toEqual([`mailsift-${parent}-abcdef`]);
    expect(await readdir(dir)).toEqual([`mailsift-${parent}-abcdef`]);
  });

  it('a directory that cannot be listed is no error', async () => {
    expect(await sweep(join(dir, 'none'))).toEqual([]);
  });
});

describe('a temp directory', () => {
  it('is named after this run and goes on remove (twice is fine)', async () => {
    const d = await tempDirectory();
    expect(d.path).toContain(`mailsift-${SELF}-`);
    await writeFile(join(d.path, 'x'), 'x');
    await d.remove();
    await d.remove();
    expect(await readdir(tmpdir())).not.toContain(d.path.slice(tmpdir().length + 1));
  });
});
