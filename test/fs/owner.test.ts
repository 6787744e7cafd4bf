import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeOwner, holdLock, ownerIsGone, SELF, startOf } from '../../src/fs/owner.js';
import { missingTool } from '../support/tools.js';

// Which run owns a file, across PID namespaces: pid, start and the namespace's
// inode; in another namespace, the kernel lock on the file tells.
const hasFlock = spawnSync('flock', ['--version']).status === 0;
const linux = process.platform === 'linux';
const FOREIGN = '4026530000'; // no PID namespace of this machine: one we cannot look into
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mailsift-owner-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe.runIf(linux)('owner', () => {
  it('SELF is pid, start and this PID namespace', () => {
    expect(SELF).toMatch(new RegExp(`^${process.pid}-${startOf(process.pid)}-\\d+u?$`));
  });

  it.each([
    ['an older name of a live run', `${process.ppid}-${startOf(process.ppid)}`, false],
    ['an older name of a pid used again', `${process.ppid}-1`, true],
    ['a pid beyond any in use', '4194303-12345', true],
    ['a bare pid of a live process (an older lock file)', String(process.ppid), false],
    ['a bare pid of none', '4194303', true],
    ['no pid at all', '0', true],
  ])('in this namespace: %s', async (_what, owner, gone) => {
    expect(await ownerIsGone(owner)).toBe(gone);
  });

  it('in another namespace, without a file to ask, or unable to lock (u): never gone', async () => {
    expect(await ownerIsGone(`1-12345-${FOREIGN}`)).toBe(false);
    const file = join(dir, 'u');
    await writeFile(file, '');
    expect(await ownerIsGone(`1-12345-${FOREIGN}u`, file, 0)).toBe(false);
    expect(describeOwner(`1-12345-${FOREIGN}`)).toBe('pid 1 in another PID namespace');
    expect(describeOwner(SELF)).toBe(`pid ${process.pid}`);
  });

  it.skipIf(missingTool('flock(1)', !hasFlock && 'not found (util-linux)'))(
    'in another namespace: alive while the file is locked, gone once it is let go (and not just made)',
    async () => {
      const file = join(dir, 'locked');
      await writeFile(file, '');
      const owner = `1-12345-${FOREIGN}`;
      const held = await holdLock(file);
      expect(held).toBeDefined();
      expect(await ownerIsGone(owner, file, 0)).toBe(false);
      await held!.close();
      expect(await ownerIsGone(owner, file)).toBe(false); // made a moment ago: its owner may be about to lock it
      expect(await ownerIsGone(owner, file, 0)).toBe(true);
    },
  );
});
