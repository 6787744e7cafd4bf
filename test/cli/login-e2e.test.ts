// Issue 31.7 and 29.10 through the real binary: a stored key that cannot be
// read must never stop (or hang) a run that does not need it — a FIFO in its
// place (open() would block the process for good), a key another user cannot
// read (the binary run as nobody). The rest of login runs in-process: login.test.ts.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, runCli, type CliResult } from '../support/run-cli.js';
import { missingToolNow } from '../support/tools.js';
import { configDirs, KEY, oneLine } from './config-dirs.js';

const dir = mkdtempSync(join(tmpdir(), 'mailsift-login-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const configDir = configDirs(dir);

describe('a stored key that is not a readable file', () => {
  const input = join(dir, 'in.txt');
  writeFileSync(input, 'a@example.com\n');
  /** an offline run (no --engine: the default) and one that asks for the API, each bounded */
  const runs = (env: Record<string, string>) =>
    Promise.all([
      runCli(['validate', input, '--no-dns'], { env, timeoutMs: 30_000 }),
      runCli(['validate', input, '--no-dns'], { env: { ...env, MAILSIFT_BASE_URL: 'http://127.0.0.1:9' }, timeoutMs: 30_000 }),
    ]);

  it.each([['a FIFO', (path: string) => spawnSyncOk('mkfifo', [path]), /the stored key is not a regular file/]])(
    '%s: an offline run never opens it; a run that needs the key says what is wrong, exit 2, at once',
    async (_what, plant, message) => {
      const { env, credentials } = configDir();
      plant(credentials);
      const [offline, api] = await runs(env);
      expect([offline.code, offline.signal], offline.stderr).toEqual([0, null]);
      expect(offline.stderr).toMatch(
        /^mailsift: no API address \(--base-url or MAILSIFT_BASE_URL\) for the key stored by "mailsift login": using the offline engine$/m,
      );
      expect([api.code, api.signal]).toEqual([2, null]);
      expect(oneLine(api)).toMatch(message);
    },
  );

  it('permission denied (EACCES): the offline run goes on, the API run gets one clear line', async (ctx) => {
    if (missingToolNow(ctx, 'root', userInfo().uid !== 0 && 'needs a second user: run as root, the binary as nobody')) return;
    const { env, credentials } = configDir();
    writeFileSync(credentials, `${KEY}\n`, { mode: 0o600 }); // root's, unreadable to nobody
    const nobodyDir = join(dir, 'nobody');
    mkdirSync(nobodyDir);
    chownSync(nobodyDir, 65534, 65534);
    chmodSync(dir, 0o755);
    const asNobody = (extra: Record<string, string>) =>
      spawnAs(65534, ['validate', input, '--no-dns', '-o', join(nobodyDir, `out-${Object.keys(extra).length}.csv`)], { ...env, ...extra });
    const offline = await asNobody({});
    expect(offline.code, offline.stderr).toBe(0);
    const api = await asNobody({ MAILSIFT_BASE_URL: 'http://127.0.0.1:9' });
    expect(api.code).toBe(2);
    expect(oneLine(api)).toBe(`mailsift: ${credentials}: cannot read the stored key: permission denied (EACCES); run "mailsift logout", then "mailsift login"`);
    expect(api.stderr).not.toContain(KEY);
  });
});

function spawnSyncOk(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args);
  if (r.status !== 0) throw new Error(`${cmd} failed`);
}

/** The binary as another user (root only), bounded like runCli. */
function spawnAs(uid: number, args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', HOME: dir, ...env },
      uid,
      gid: uid,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}
