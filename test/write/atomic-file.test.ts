import { lstat, mkdtemp, readdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { closeSync, existsSync, openSync } from 'node:fs';
import { startOf } from '../../src/fs/owner.js';
import { sweep } from '../../src/fs/temp.js';
import { openAtomic } from '../../src/write/atomic-file.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mailsift-atomic-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const at = (name: string): string => join(dir, name);
const write = (stream: NodeJS.WritableStream, text: string): Promise<void> => new Promise((resolve) => stream.end(text, () => resolve()));

describe('an atomic file', () => {
  it('leaves the old content in place until commit, then replaces it whole', async () => {
    await writeFile(at('out.csv'), 'old\n');
    const f = await openAtomic(at('out.csv'), 'out.csv');
    f.stream.write('new ');
    expect(await readFile(at('out.csv'), 'utf8')).toBe('old\n');
    await write(f.stream, 'content\n');
    expect(await readFile(at('out.csv'), 'utf8')).toBe('old\n');
    expect(await f.commit()).toBe(true);
    expect(await readFile(at('out.csv'), 'utf8')).toBe('new content\n');
    expect(await readdir(dir)).toEqual(['out.csv']);
  });

  it('discard leaves the old file byte-identical and no temp file', async () => {
    await writeFile(at('out.csv'), 'old\n');
    const f = await openAtomic(at('out.csv'), 'out.csv');
    f.stream.write('half a row');
    await f.discard();
    expect(await readFile(at('out.csv'), 'utf8')).toBe('old\n');
    expect(await readdir(dir)).toEqual(['out.csv']);
  });

  it("'create' puts a partial output only where no file is", async () => {
    await writeFile(at('old.csv'), 'complete\n');
    const kept = await openAtomic(at('old.csv'), 'old.csv');
    await write(kept.stream, 'partial\n');
    expect(await kept.commit('create')).toBe(false);
    const fresh = await openAtomic(at('new.csv'), 'new.csv');
    await write(fresh.stream, 'partial\n');
    expect(await fresh.commit('create')).toBe(true);
    expect([await readFile(at('old.csv'), 'utf8'), await readFile(at('new.csv'), 'utf8')]).toEqual(['complete\n', 'partial\n']);
    expect((await readdir(dir)).sort()).toEqual(['new.csv', 'old.csv']);
  });

  it('writes through a symbolic link: the target is replaced, the link stays', async () => {
    await writeFile(at('real.csv'), 'old\n');
    await symlink('real.csv', at('link.csv'));
    const f = await openAtomic(at('link.csv'), 'link.csv');
    await write(f.stream, 'new\n');
    await f.commit();
    expect((await lstat(at('link.csv'))).isSymbolicLink()).toBe(true);
    expect(await readlink(at('link.csv'))).toBe('real.csv');
    expect(await readFile(at('real.csv'), 'utf8')).toBe('new\n');
  });

  it('refuses a directory, and a path in a missing directory, naming them (exit 2)', async () => {
    await expect(openAtomic(dir, 'd')).rejects.toMatchObject({ exitCode: 2, message: 'cannot write d: it is a directory (EISDIR)' });
    await expect(openAtomic(at('no/out.csv'), 'no/out.csv')).rejects.toMatchObject({
      exitCode: 2,
      message: 'cannot write no/out.csv: no such directory (ENOENT)',
    });
  });

  it('writes a device directly (it cannot be replaced)', async () => {
    const f = await openAtomic('/dev/null', '/dev/null');
    await write(f.stream, 'gone\n');
    expect(await f.commit()).toBe(true);
    expect((await lstat('/dev/null')).isCharacterDevice()).toBe(true);
  });
});

describe('temp files and their owners', () => {
  const name = (owner: string): string => `.out.csv.${owner}-0123456789ab.mailsift-tmp`;
  const self = (): string => `${process.pid}-${startOf(process.pid) ?? '0'}`;

  it('names the temp file after this process, and removes the leftovers of runs that are gone', async () => {
    const parent = `${process.ppid}-${startOf(process.ppid) ?? '0'}`;
    const leftovers = {
      dead: name('4194303-12345'), // beyond any pid in use here
      reused: name(`${process.ppid}-1`), // a live pid, but started at another time: not the run that wrote it
      live: name(parent),
      old: '.out.csv.0123456789ab.mailsift-tmp', // an older mailsift's name, whose owner cannot be told
    };
    for (const file of Object.values(leftovers)) await writeFile(at(file), 'partial');
    const f = await openAtomic(at('out.csv'), 'out.csv');
    const mine = (await readdir(dir)).filter((n) => n.includes(`.${self()}-`));
    expect(mine).toHaveLength(1);
    expect((await readdir(dir)).sort()).toEqual([leftovers.old, leftovers.live, ...mine].sort());
    await f.discard();
  });

  it.runIf(existsSync('/proc/self/stat'))('tells a pid used again by another process from the owner', async () => {
    await writeFile(at(name(`${process.pid}-1`)), 'partial');
    await sweep(dir);
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('a stream is written in place', () => {
  it('a descriptor the process holds (/dev/fd/N) is appended to, never renamed over', async () => {
    await writeFile(at('log.txt'), 'earlier\n');
    const fd = openSync(at('log.txt'), 'a');
    try {
      const f = await openAtomic(`/dev/fd/${fd}`, 'the log');
      await write(f.stream, 'rows\n');
      expect(await f.commit()).toBe(true);
      expect(await readFile(at('log.txt'), 'utf8')).toBe('earlier\nrows\n');
      expect(await readdir(dir)).toEqual(['log.txt']);
    } finally {
      closeSync(fd);
    }
  });
});
