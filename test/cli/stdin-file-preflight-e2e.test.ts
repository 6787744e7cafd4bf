import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { BIN, parseCsv } from '../support/run-cli.js';

// stdin redirected from a file (`mailsift validate - < list.csv`) is a file:
// the pre-flight pass reads it a second time, from where the run's reading
// begins, so a problem deep in it ends the run before the first request, as
// for a named file. A pipe keeps stdin's rule. Spawned: only a real process
// has a descriptor 0 that is a file.
const KEY = 'sk_test_stdin_file';
const ROWS = 30_000;
const dir = mkdtempSync(join(tmpdir(), 'mailsift-stdin-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const rows = (stray: boolean): string =>
  'id,email,note\n' + Array.from({ length: ROWS }, (_, i) => `${i},user${i}@example.com,ok${stray && i === 20_000 ? ',stray' : ''}`).join('\n') + '\n';

let api: FaultServer;
beforeAll(async () => {
  api = await startFaultServer({ apiKey: KEY });
});
afterAll(() => api.close());

/** Runs `script` under sh in `dir`, with the binary as $MAILSIFT. */
function sh(script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = { PATH: process.env.PATH ?? '', NO_COLOR: '1', MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: api.url, MAILSIFT: `"${process.execPath}" "${BIN}"` };
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', script], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('stdin that is a file is read twice, as a named file', () => {
  it('a stray field in row 20,001 of `- < file`: exit 2, the row named, no request', async () => {
    writeFileSync(join(dir, 'stray.csv'), rows(true));
    const before = api.requests.length;
    const r = await sh('eval "$MAILSIFT validate - --batch-size 100" < stray.csv');
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^mailsift: stdin: row 20002 has a cell in column D \(4\), past the 3 columns of the header/);
    expect(r.stdout).toBe('');
    expect(api.requests.length - before).toBe(0);
  });

  it('read from where the run begins: a line read before mailsift (`(read x; mailsift -) < file`) is not part of it', async () => {
    // the preamble is wider than the table: a pre-flight from the file's start would refuse the run
    writeFileSync(join(dir, 'preamble.csv'), 'exported by,someone,on,a,day\n' + rows(false));
    const before = api.requests.length;
    const r = await sh('(read preamble; eval "$MAILSIFT validate - --batch-size 1000 -q") < preamble.csv');
    expect(r.code, r.stderr).toBe(0);
    const out = parseCsv(r.stdout);
    expect(out[0]!.slice(0, 4)).toEqual(['id', 'email', 'note', 'status']);
    expect(out.length).toBe(ROWS + 1);
    expect(out[ROWS]!.slice(0, 3)).toEqual([String(ROWS - 1), `user${ROWS - 1}@example.com`, 'ok']);
    expect(api.requests.length - before).toBe(ROWS / 1000);
  });

  it('a pipe cannot be read twice: the same stray field ends the run when its row comes, after the rows before it were paid', async () => {
    const before = api.requests.length;
    const r = await sh('cat stray.csv | eval "$MAILSIFT validate - --batch-size 1000 -o out.csv"');
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/stdin: row 20002 has a cell in column D/);
    expect(api.requests.length - before).toBeGreaterThan(0);
  });
});
