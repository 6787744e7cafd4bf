// Issue 31.7 and 29.10, the commands in-process: `mailsift login` in a missing
// HOME, a key that is not one, a shared or hostile config directory, and a
// stored key that cannot be read — which must never stop a run that does not
// need it. A FIFO there (a read that would block the process) and a key another
// user cannot read run the binary: login-e2e.test.ts.
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../support/run-in-process.js';
import { configDirs, KEY, oneLine } from './config-dirs.js';

const dir = mkdtempSync(join(tmpdir(), 'mailsift-login-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const configDir = configDirs(dir);

describe('mailsift login', () => {
  it('refuses a HOME that does not exist instead of creating it', async () => {
    const home = join(dir, 'no-such-home');
    const r = await runInProcess(['login'], { env: { HOME: home }, stdin: `${KEY}\n` });
    expect(r.code).toBe(2);
    expect(oneLine(r)).toBe(`mailsift: login: HOME (${home}) is not an existing directory: set HOME to yours, or XDG_CONFIG_HOME to where the key should go`);
    expect(existsSync(home)).toBe(false);
    // an existing HOME gets its .config and mailsift/ made, 0700
    mkdirSync(home);
    const ok = await runInProcess(['login'], { env: { HOME: home }, stdin: `${KEY}\n` });
    expect(ok.code, ok.stderr).toBe(0);
    expect(statSync(join(home, '.config', 'mailsift')).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(home, '.config', 'mailsift', 'credentials'), 'utf8')).toBe(`${KEY}\n`);
  });

  it('refuses a key that does not look like one, without quoting it; --force stores it', async () => {
    const { env, credentials } = configDir();
    const r = await runInProcess(['login'], { env, stdin: 'x\n' });
    expect(r.code).toBe(2);
    expect(oneLine(r)).toBe(
      'mailsift: login: that does not look like an API key (1 characters; keys are 16 or more letters, digits, - and _): nothing stored; check what was pasted, or store it anyway with --force',
    );
    expect(existsSync(credentials)).toBe(false);
    const pasted = await runInProcess(['login'], { env, stdin: 'Bearer: sk_live_abc\n' }); // a pasted header line is not a key either
    expect(pasted.code).toBe(2);
    expect(pasted.stderr).not.toContain('sk_live_abc');
    const forced = await runInProcess(['login', '--force'], { env, stdin: 'x\n' });
    expect(forced.code).toBe(0);
    expect(readFileSync(credentials, 'utf8')).toBe('x\n');
  });

  it('in a directory others may write: warns, and the key lands in a new 0600 file of its own', async () => {
    const { env, mailsift, credentials } = configDir(0o777);
    // another user's file, and a stale temp name pointing at it
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'not yours\n');
    symlinkSync(victim, `${credentials}.tmp`);
    const r = await runInProcess(['login'], { env, stdin: `${KEY}\n` });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe(
      `mailsift: warning: ${mailsift} is writable by others (mode 777): they could replace the key; chmod 700 ${mailsift}\n` +
        `mailsift: API key stored in ${credentials}\n`,
    );
    expect(lstatSync(credentials).isFile()).toBe(true);
    expect(statSync(credentials).mode & 0o777).toBe(0o600);
    expect(readFileSync(victim, 'utf8')).toBe('not yours\n');
  });

  it('refuses to write through a symbolic link planted at the credentials path', async () => {
    const { env, credentials } = configDir(0o777);
    const victim = join(dir, 'victim2.txt');
    writeFileSync(victim, 'not yours\n');
    symlinkSync(victim, credentials);
    const r = await runInProcess(['login'], { env, stdin: `${KEY}\n` });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `mailsift: login: ${credentials} is a symbolic link, which mailsift never writes through; remove it (mailsift logout), then log in again\n`,
    );
    expect(readFileSync(victim, 'utf8')).toBe('not yours\n');
    expect(readlinkSync(credentials)).toBe(victim);
  });
});

describe('a stored key that is not a readable file', () => {
  const input = join(dir, 'in.txt');
  writeFileSync(input, 'a@example.com\n');
  /** an offline run (no --engine: the default) and one that asks for the API, each bounded */
  const runs = (env: Record<string, string>) =>
    Promise.all([
      runInProcess(['validate', input, '--no-dns'], { env, timeoutMs: 30_000 }),
      runInProcess(['validate', input, '--no-dns'], { env: { ...env, MAILSIFT_BASE_URL: 'http://127.0.0.1:9' }, timeoutMs: 30_000 }),
    ]);

  it.each([
    ['a link to /dev/zero', (path: string) => symlinkSync('/dev/zero', path), /the stored key is a symbolic link, which mailsift never follows/],
    ['a 1 MB file', (path: string) => writeFileSync(path, 'k'.repeat(1 << 20)), /holds 1048576 bytes, not one key/],
  ])('%s: an offline run never opens it; a run that needs the key says what is wrong, exit 2, at once', async (_what, plant, message) => {
    const { env, credentials } = configDir();
    plant(credentials);
    const [offline, api] = await runs(env);
    expect([offline.code, offline.signal], offline.stderr).toEqual([0, null]);
    expect(offline.stderr).toMatch(
      /^mailsift: no API address \(--base-url or MAILSIFT_BASE_URL\) for the key stored by "mailsift login": using the offline engine$/m,
    );
    expect([api.code, api.signal]).toEqual([2, null]);
    expect(oneLine(api)).toMatch(message);
  });
});
