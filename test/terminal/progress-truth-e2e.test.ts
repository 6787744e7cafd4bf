import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ZONES, startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import { BIN } from '../support/run-cli.js';
import { missingTool } from '../support/tools.js';
import { waitFor } from '../support/wait.js';

// The progress line and the login prompt as a terminal shows them: the binary
// inside a real pseudo-terminal (tmux, installed by `.ci/run`), its bytes
// recorded with pipe-pane.
const hasTmux = spawnSync('tmux', ['-V']).status === 0;

describe.skipIf(missingTool('tmux', !hasTmux && 'not found (apt-get install tmux)'))('on a terminal', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mailsift-truth-'));
  const socket = join(dir, 'tmux.sock');
  const tmux = (...args: string[]) => execFileSync('tmux', ['-S', socket, ...args], { encoding: 'utf8' });
  let dns: TestDnsServer;
  let session = 0;

  beforeAll(async () => {
    dns = await startDnsServer({ zones: { ...DEFAULT_ZONES, 'held.test': { mx: [{ exchange: 'mail.held.test', priority: 10 }], hold: true } } });
  });
  afterAll(async () => {
    spawnSync('tmux', ['-S', socket, 'kill-server']);
    dns.releaseHeld();
    await dns.close();
  });

  /** Runs `command` in a fresh 120-column pane; returns the pane's recorded bytes and the exit-code file. */
  function inPane(command: string): { log: string; done: string; name: string } {
    const name = `s${++session}`;
    const log = join(dir, `${name}.log`);
    const done = join(dir, `${name}.exit`);
    // waits for a line first, so that pipe-pane records from the first byte
    const script = ['read _go', command, `echo $? > "${done}"`, 'sleep 60'].join('; ');
    const env = { PATH: process.env.PATH ?? '', HOME: dir, XDG_CONFIG_HOME: join(dir, 'config'), TERM: 'xterm-256color' };
    execFileSync('tmux', ['-S', socket, '-f', '/dev/null', 'new-session', '-d', '-s', name, '-x', '120', '-y', '20', script], { env });
    tmux('pipe-pane', '-o', '-t', name, `cat >> "${log}"`);
    tmux('send-keys', '-t', name, 'Enter');
    return { log, done, name };
  }
  const read = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8') : '');
  // the shell creates the file before it writes the code: ended once the line is whole
  const ended = (done: string) => /^\d+\n$/.test(read(done));
  // pipe-pane copies the pane's bytes on its own time: the summary's last line says they have all come
  const summarised = (log: string) => /output {4}\S/.test(read(log).replace(/\x1b\[[0-9;?]*[A-Za-z]/g, ''));
  const percentages = (log: string) => [...log.matchAll(/(\d+)% · /g)].map((m) => Number(m[1]));

  it('an .xlsx run moves while DNS answers are awaited, never runs backwards, and reaches 100%', async () => {
    const book = new ExcelJS.Workbook();
    const sheet = book.addWorksheet('Leads');
    sheet.addRow(['name', 'email']);
    for (let i = 0; i < 20; i++) sheet.addRow([`Quick ${i}`, `q${i}@mx.test`]);
    for (let i = 0; i < 20; i++) sheet.addRow([`Slow ${i}`, `s${i}@held.test`]);
    const input = join(dir, 'leads.xlsx');
    await book.xlsx.writeFile(input);
    const output = join(dir, 'leads.csv');
    const run = inPane(`"${process.execPath}" "${BIN}" validate "${input}" -o "${output}" --engine local --dns-server ${dns.address} --dns-timeout 60000`);
    // half the addresses have their answer, the other half wait: the line says so before any row is written
    await waitFor(() => /(4\d|5\d)% · 40 rows read · 0(\/40)? addresses validated/.test(read(run.log)), {
      what: 'progress during the DNS wait',
      timeoutMs: 30_000,
    });
    expect(read(output).split('\n').filter(Boolean).length).toBeLessThanOrEqual(1);
    dns.releaseHeld();
    await waitFor(() => ended(run.done) && summarised(run.log), { what: 'the run to end and its summary to be recorded', timeoutMs: 30_000 });
    expect(read(run.done).trim()).toBe('0');
    const shown = percentages(read(run.log));
    expect(shown.at(-1)).toBe(100);
    expect(shown).toEqual([...shown].sort((a, b) => a - b));
    expect(read(output).split('\n').filter(Boolean)).toHaveLength(41);
  });

  it('a terminal of 0 columns gets the summary and no progress line', async () => {
    const input = join(dir, 'list.txt');
    execFileSync('sh', ['-c', `for i in 1 2 3; do echo u$i@mx.test; done > "${input}"`]);
    const run = inPane(
      `stty cols 0; "${process.execPath}" "${BIN}" validate "${input}" -o "${join(dir, 'narrow.csv')}" --engine local --dns-server ${dns.address}`,
    );
    await waitFor(() => ended(run.done) && summarised(run.log), { what: 'the run to end and its summary to be recorded', timeoutMs: 30_000 });
    expect(read(run.done).trim()).toBe('0');
    const log = read(run.log);
    expect(log).toContain('3 rows in');
    expect(log).not.toMatch(/rows read/);
    expect(log.length).toBeLessThan(5000);
  });

  it('mailsift login asks for the key without echoing it, and stores it with mode 600', async () => {
    const run = inPane(`"${process.execPath}" "${BIN}" login`);
    await waitFor(() => read(run.log).includes('API key: '), { what: 'the prompt', timeoutMs: 30_000 });
    tmux('send-keys', '-t', run.name, '-l', 'typed-secret-key-31');
    tmux('send-keys', '-t', run.name, 'Enter');
    await waitFor(() => ended(run.done), { what: 'login to end', timeoutMs: 30_000 });
    expect(read(run.done).trim()).toBe('0');
    expect(read(run.log)).not.toContain('typed-secret-key-31');
    const path = join(dir, 'config', 'mailsift', 'credentials');
    expect(read(path)).toBe('typed-secret-key-31\n');
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });
});
