import { chmod, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { replacement, replaceWhole } from '../../src/fs/replace.js';

// The one atomic replace: a temp file beside the target, made durable, renamed over it.
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mailsift-replace-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));
const at = (name: string): string => join(dir, name);

describe('a replacement', () => {
  it('leaves the target as it was until put, then replaces it whole; no temp file left', async () => {
    await writeFile(at('f'), 'old\n');
    const r = await replacement(at('f'));
    await r.handle.writeFile('new\n');
    expect(await readFile(at('f'), 'utf8')).toBe('old\n');
    expect((await readdir(dir)).sort()).toEqual(['f', r.path.slice(dir.length + 1)].sort());
    expect(await r.put()).toBe(true);
    expect(await readFile(at('f'), 'utf8')).toBe('new\n');
    expect(await readdir(dir)).toEqual(['f']);
  });

  it("'create' puts it only where no file is, and removes the temp file either way", async () => {
    await writeFile(at('old'), 'complete\n');
    const kept = await replacement(at('old'));
    await kept.handle.writeFile('partial\n');
    expect(await kept.put('create')).toBe(false);
    const fresh = await replacement(at('new'));
    await fresh.handle.writeFile('partial\n');
    expect(await fresh.put('create')).toBe(true);
    expect([await readFile(at('old'), 'utf8'), await readFile(at('new'), 'utf8')]).toEqual(['complete\n', 'partial\n']);
    expect((await readdir(dir)).sort()).toEqual(['new', 'old']);
  });

  it('discard leaves the target byte-identical and no temp file', async () => {
    await writeFile(at('f'), 'old\n');
    const r = await replacement(at('f'));
    await r.handle.writeFile('half');
    await r.discard();
    expect(await readFile(at('f'), 'utf8')).toBe('old\n');
    expect(await readdir(dir)).toEqual(['f']);
  });

  it('replaces a symbolic link at the target, never what it points to', async () => {
    await writeFile(at('victim'), 'not yours\n');
    await symlink(at('victim'), at('f'));
    await replaceWhole(at('f'), 'mine\n');
    expect((await stat(at('f'))).isFile()).toBe(true);
    expect(await readFile(at('f'), 'utf8')).toBe('mine\n');
    expect(await readFile(at('victim'), 'utf8')).toBe('not yours\n');
  });

  it('a new file gets the mode asked for; keepMode: false gives it whatever was there', async () => {
    await replaceWhole(at('new'), 'x\n', { mode: 0o600 });
    expect((await stat(at('new'))).mode & 0o777).toBe(0o600);
    await writeFile(at('shared'), 'x\n');
    await chmod(at('shared'), 0o644);
    await replaceWhole(at('shared'), 'key\n', { mode: 0o600, keepMode: false });
    expect((await stat(at('shared'))).mode & 0o777).toBe(0o600);
  });

  it('fails in a missing directory with the file system error, and leaves nothing', async () => {
    await expect(replaceWhole(at('no/f'), 'x')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readdir(dir)).toEqual([]);
  });
});
