// Issue 17 item 7, run in-process: keys list/revoke, one error prefix, validate
// --help, shell completion (the bash script run by bash). Serve's start lines
// are in test/serve/cli-e2e.test.ts.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../support/run-in-process.js';
import { toCommand } from '../../src/cli/command.js';
import { VALIDATE } from '../../src/cli/validate/options.js';

const dir = mkdtempSync(join(tmpdir(), 'mailsift-usability-'));

describe('keys', () => {
  it('list shows ids and hints, never a whole key; revoke removes one by id and keeps the rest', async () => {
    const file = join(dir, 'keys.txt');
    writeFileSync(file, '# team keys\n', { mode: 0o600 });
    const a = (await runInProcess(['keys', 'create', '--keys-file', file])).stdout.trim();
    const b = (await runInProcess(['keys', 'create', '--keys-file', file])).stdout.trim();

    const list = await runInProcess(['keys', 'list', '--keys-file', file]);
    expect(list.code).toBe(0);
    const lines = list.stdout.trim().split('\n');
    expect(lines).toEqual([`${lines[0]!.slice(0, 12)}  msk_…${a.slice(-4)}`, `${lines[1]!.slice(0, 12)}  msk_…${b.slice(-4)}`]);
    expect(list.stdout).not.toContain(a);
    expect(list.stdout).not.toContain(b.slice(4, 40));

    const id = lines[0]!.slice(0, 8);
    const revoke = await runInProcess(['keys', 'revoke', id, '--keys-file', file]);
    expect(revoke.code, revoke.stderr).toBe(0);
    expect(revoke.stderr).toMatch(/^mailsift: key [0-9a-f]{12} revoked; 1 key left in .*restart a running mailsift serve/);
    expect(readFileSync(file, 'utf8')).toBe(`# team keys\n${b}\n`);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const again = await runInProcess(['keys', 'revoke', id, '--keys-file', file]);
    expect([again.code, again.stderr]).toEqual([2, `mailsift: keys revoke: no key with id ${id} in ${file}\n`]);
    const bad = await runInProcess(['keys', 'revoke', a, '--keys-file', file]); // a whole key is not an id, and is not echoed
    expect(bad.code).toBe(2);
    expect(bad.stderr).not.toContain(a.slice(4));
  });
});

describe('keys revoke replaces the keys file whole (fs/replace.ts)', () => {
  const many = (n: number): string => Array.from({ length: n }, (_, i) => `msk_${String(i).padStart(43, 'k')}`).join('\n') + '\n';
  const firstId = async (file: string): Promise<string> => (await runInProcess(['keys', 'list', '--keys-file', file])).stdout.slice(0, 12);

  it('keeps the permissions of the file: one shared with the group serve runs as stays readable by it', async () => {
    const file = join(dir, 'shared-keys.txt');
    writeFileSync(file, many(3));
    chmodSync(file, 0o640);
    const r = await runInProcess(['keys', 'revoke', await firstId(file), '--keys-file', file]);
    expect(r.code, r.stderr).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o640);
  });

  it.skipIf(process.getuid?.() !== 0)('on a full disk: exit 2 naming it, the keys file as it was, and no partial copy of the keys left beside it', async () => {
    const disk = mkdtempSync(join(dir, 'disk-'));
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', disk]).status).toBe(0);
    try {
      const file = join(disk, 'keys.txt');
      writeFileSync(file, many(800), { mode: 0o600 });
      const before = readFileSync(file, 'utf8');
      // the disk filled, then 8 KiB freed: part of the new file is written before ENOSPC
      spawnSync('dd', ['if=/dev/zero', `of=${join(disk, 'fill')}`, 'bs=4k']);
      expect(spawnSync('truncate', ['-s', '-8K', join(disk, 'fill')]).status).toBe(0);
      const r = await runInProcess(['keys', 'revoke', await firstId(file), '--keys-file', file]);
      expect([r.code, r.stderr]).toEqual([2, `mailsift: --keys-file: cannot write ${file}: no space left on the device (ENOSPC)\n`]);
      expect(readFileSync(file, 'utf8')).toBe(before);
      expect(readdirSync(disk).sort()).toEqual(['fill', 'keys.txt']);
    } finally {
      spawnSync('umount', [disk]);
    }
  });
});

describe('messages', () => {
  it('every error line starts with "mailsift:", commander\'s included', async () => {
    for (const args of [['validate', '--bogus'], ['validate', '--batch-size', '0'], ['nope'], ['completion', 'tcsh']]) {
      const r = await runInProcess(args);
      expect(r.code).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(/^mailsift: /);
      expect(r.stderr).not.toMatch(/^error:/m);
    }
  });

  it('a key given as a flag is refused with where keys go, never echoed; a TTL without its unit asks for one (issues 31.5, 31.6)', async () => {
    const key = 'sk_live_9f8e7d6c5b4a3f2e1d0c';
    const r = await runInProcess(['validate', '-', '--api-key', key], { stdin: 'a@example.com\n' });
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toBe(
      'mailsift: --api-key: keys never go in flags (ps and shell history show them); set MAILSIFT_API_KEY, pass --api-key-file FILE or run "mailsift login"\n',
    );
    const ttl = await runInProcess(['validate', '-', '--cache', join(dir, 'ttl.cache'), '--cache-ttl', '30'], { stdin: 'a@example.com\n' });
    expect([ttl.code, ttl.stdout]).toEqual([2, '']);
    expect(ttl.stderr).toMatch(/^mailsift: option '--cache-ttl <duration>' argument '30' is invalid\. a number alone is ambiguous: add a unit, e\.g\. 30d/);
    expect(readdirSync(dir)).not.toContain('ttl.cache');
  });

  // validate --help's exit codes, --fail-on metrics, output columns and environment: test/cli/plan.test.ts
});

describe('completion', () => {
  const complete = (script: string, line: string): string[] => {
    const words = line.split(' ');
    const r = spawnSync(
      'bash',
      [
        '-c',
        `source "$1"; COMP_WORDS=("\${@:2}"); COMP_CWORD=$((\${#COMP_WORDS[@]}-1)); _mailsift; printf '%s\\n' "\${COMPREPLY[@]}"`,
        'bash',
        script,
        ...words,
      ],
      {
        encoding: 'utf8',
        cwd: dir,
      },
    );
    return r.stdout.split('\n').filter(Boolean);
  };

  it("bash: completes commands, every option of a command, and choices, from the CLI's own table", async () => {
    const r = await runInProcess(['completion', 'bash']);
    expect(r.code).toBe(0);
    const script = join(dir, 'mailsift.bash');
    writeFileSync(script, r.stdout);
    expect(complete(script, 'mailsift va')).toEqual(['validate']);
    expect(complete(script, 'mailsift keys ')).toEqual(['create', 'list', 'revoke']);
    expect(complete(script, 'mailsift validate --engine ')).toEqual(['api', 'local', 'offline']);
    expect(complete(script, 'mailsift validate -o out.csv --jou')).toEqual(['--journal']);
    expect(complete(script, 'mailsift completion ')).toEqual(['bash', 'zsh', 'fish']);
    // in sync: every long option validate --help shows is offered
    const help = toCommand(VALIDATE, 'all').helpInformation(); // every long option validate --help all shows
    const longs = [...new Set(help.match(/^\s+(?:-\w, )?(--[\w-]+)/gm)!.map((l) => l.trim().replace(/^-\w, /, '')))];
    expect(longs.length).toBeGreaterThan(20);
    expect(complete(script, 'mailsift validate --').sort()).toEqual(expect.arrayContaining(longs));
  });

  it('zsh and fish scripts come from the same table', async () => {
    const zsh = (await runInProcess(['completion', 'zsh'])).stdout;
    expect(zsh).toMatch(/^#compdef mailsift\n/);
    expect(zsh).toContain('bashcompinit');
    const fish = (await runInProcess(['completion', 'fish'])).stdout;
    expect(fish).toContain("complete -c mailsift -n '__fish_seen_subcommand_from validate' -l journal -r -F");
    expect(fish).toContain("complete -c mailsift -n '__fish_seen_subcommand_from keys; and not __fish_seen_subcommand_from create list revoke' -a list");
    expect(fish).toContain("-l engine -x -a 'api local offline'");
  });
});
