// The user's files, through the real binary where only a process shows it:
// stdout appended to the input (its descriptor 1 is the input file), and an
// existing output that survives Ctrl-C byte for byte. The rest runs in-process:
// file-safety.test.ts.
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { BIN } from '../support/run-cli.js';
import { API_KEY, apiEnv, runAndSignal } from '../stores/helpers.js';
import { caseDirectories, INPUT, LOCAL, snapshot } from './cases.js';

const root = mkdtempSync(join(tmpdir(), 'mailsift-files-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let server: FaultServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const dirWith = caseDirectories(root);

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
