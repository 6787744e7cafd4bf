// The user's files, through the real binary where only a process shows it:
// stdout appended to the input (its descriptor 1 is the input file), and an
// existing output that survives Ctrl-C byte for byte. The rest runs in-process:
// file-safety.test.ts.
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { BIN } from '../support/run-cli.js';
import { API_KEY, apiEnv, runAndSignal } from '../stores/helpers.js';

const root = mkdtempSync(join(tmpdir(), 'mailsift-files-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let server: FaultServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A fresh directory with these files in it. */
function dirWith(files: Record<string, string | Buffer>): string {
  const dir = mkdtempSync(join(root, 'case-'));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return dir;
}

/** Every file of a directory (recursively) with its bytes: what a run must leave alone. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const path = join(dir, name);
    try {
      out[name] = readFileSync(path).toString('base64');
    } catch {
      out[name] = '(directory)';
    }
  }
  return out;
}

/** Offline engine without DNS: fast, no network, every row answered (a DNS nobody answers is the run's own failure: exit 4). */
const LOCAL = ['--engine', 'local', '--no-dns', '-q'];
const INPUT = 'name,email\nAnn,ann@example.com\nBob,bob@example.com\n';

describe('no output may be the input', () => {
  it('stdout appended to the input (>> in.csv): exit 2, the input byte-identical', async () => {
    const dir = dirWith({ 'in.csv': INPUT });
    const fd = openSync(join(dir, 'in.csv'), 'a');
    const child = spawn(process.execPath, [BIN, 'validate', 'in.csv', ...LOCAL], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['ignore', fd, 'pipe'],
    });
    closeSync(fd);
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    expect(await new Promise((resolve) => child.on('close', resolve))).toBe(2);
    expect(stderr.trim()).toBe(
      'mailsift: stdout is the input file in.csv: the verdicts would be written into the input as it is read; redirect them to another file',
    );
    expect(readFileSync(join(dir, 'in.csv'), 'utf8')).toBe(INPUT);
  });
});

describe('an existing output survives a run that does not complete', () => {
  const OLD = { 'out.csv': 'yesterday,complete\r\nresults\n', 's.json': '{"total": 2}\n' };
  const many = 'email\n' + Array.from({ length: 200 }, (_, i) => `u${i}@example.com`).join('\n') + '\n';

  it('Ctrl-C: exit 130, out.csv and the summary byte-identical, said so, no temp file', async () => {
    server = await startFaultServer({ apiKey: API_KEY, delayMs: 300 });
    const dir = dirWith({ 'in.csv': many, ...OLD });
    const before = snapshot(dir);
    const args = ['validate', 'in.csv', '-o', 'out.csv', '--summary', 's.json', '--batch-size', '10', '--concurrency', '1', '--no-progress'];
    const r = await runAndSignal(args, apiEnv(server), () => server!.requests.length >= 1, 'SIGINT', 0, dir);
    expect([r.signalled, r.code], r.stderr).toEqual([true, 130]);
    expect(r.stderr).toContain('out.csv left as it was: only a complete run replaces an output');
    expect(snapshot(dir)).toEqual(before);
  });
});
