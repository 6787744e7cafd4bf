// validate as a process: its stdout a descriptor on a full device, its stdout a pipe that
// head closes. The rest of validate runs in-process: validate.test.ts.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { BIN } from '../support/run-cli.js';

const KEY = 'sk_test_SECRET_4f9d2c';
const dir = mkdtempSync(join(tmpdir(), 'mailsift-e2e-'));
const file = (name: string, content: string | Buffer): string => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

let server: FaultServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
const api = (): Record<string, string> => ({ MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: server!.url });

describe.skipIf(!existsSync('/dev/full'))('an output that cannot be written (a full disk)', () => {
  it('stdout on /dev/full: one line naming the output, exit 74, never success', async () => {
    const input = file('full.txt', 'a@example.com\nb@example.com\n');
    const fd = openSync('/dev/full', 'w');
    const child = spawn(process.execPath, [BIN, 'validate', input, '--engine', 'local', '-q'], {
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['ignore', fd, 'pipe'],
    });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    closeSync(fd);
    expect(code).toBe(74); // issue 13: a full disk is no bug (it was 1)
    expect(stderr.trim()).toMatch(/^mailsift: cannot write stdout: ENOSPC \(no space left on the device\); make room or give another path, then run again$/);
  });
});

describe('pipes', () => {
  let big: string;
  beforeAll(() => {
    big = file('big.txt', Array.from({ length: 20_000 }, (_, i) => `user${i}@example.com`).join('\n'));
  });

  it('ends quietly when the reader goes away (| head -1)', async () => {
    server = await startFaultServer({ apiKey: KEY });
    const sh = spawn('sh', ['-c', `"${process.execPath}" "${BIN}" validate "${big}" | head -1`], {
      env: { PATH: process.env.PATH ?? '', ...api() },
    });
    let stdout = '';
    let stderr = '';
    sh.stdout.on('data', (d) => (stdout += d));
    sh.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => sh.on('close', resolve));
    expect(code).toBe(0);
    expect(stdout.trim()).toMatch(/^email,status,/);
    expect(stderr).not.toMatch(/EPIPE|Error|at /);
  });
});
