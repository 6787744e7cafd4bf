import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { BIN } from '../support/run-cli.js';
import { missingTool } from '../support/tools.js';
import { waitFor } from '../support/wait.js';

// The binary inside a real pseudo-terminal (tmux): progress must show on the
// terminal while the output file gets only CSV. `.ci/run` installs tmux.
const hasTmux = spawnSync('tmux', ['-V']).status === 0;
const ROWS = 30;

describe.skipIf(missingTool('tmux', !hasTmux && 'not found (apt-get install tmux)'))('validate on a terminal', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mailsift-tty-'));
  // A private tmux server: never touches a developer's sessions.
  const socket = join(dir, 'tmux.sock');
  const tmux = (...args: string[]) => execFileSync('tmux', ['-S', socket, ...args], { encoding: 'utf8' });
  let api: FaultServer;

  beforeAll(async () => {
    // Slow answers and a tight rate limit keep the run going for a couple of
    // seconds, with a pause to wait out: there is progress to show.
    api = await startFaultServer({ delayMs: 100, rateLimit: { limit: 2, windowMs: 1000, resetFormat: 'epoch-s' } });
  });
  afterAll(async () => {
    spawnSync('tmux', ['-S', socket, 'kill-server']);
    await api.close();
  });

  it('shows progress on stderr and keeps the output file clean', async () => {
    const input = join(dir, 'list.txt');
    const output = join(dir, 'out.csv');
    const log = join(dir, 'pane.log');
    const done = join(dir, 'exit-code');
    writeFileSync(input, Array.from({ length: ROWS }, (_, i) => `user${i}@example.com`).join('\n') + '\n');

    // The command waits for a line on the terminal so that pipe-pane is
    // recording before the first byte is written.
    const script = [
      'read _go',
      `"${process.execPath}" "${BIN}" validate "${input}" -o "${output}" --batch-size 5 --concurrency 1`,
      `echo $? > "${done}"`,
      'sleep 60',
    ].join('; ');
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      TERM: 'xterm-256color',
      MAILSIFT_API_KEY: 'test-key',
      MAILSIFT_BASE_URL: api.url,
    };
    // CI, NO_COLOR and FORCE_COLOR from the test runner's environment stay out.
    execFileSync('tmux', ['-S', socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'e2e', '-x', '120', '-y', '20', script], {
      env,
    });
    tmux('pipe-pane', '-o', '-t', 'e2e', `cat >> "${log}"`);
    tmux('send-keys', '-t', 'e2e', 'Enter');

    // the run takes about 1.5 s of server delay
    // ended once the shell has written the whole line (it creates the file first), and
    // recorded once the summary's last line has come through pipe-pane, which copies on its own time
    const read = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8') : '');
    await waitFor(() => /^\d+\n$/.test(read(done)) && /output {4}\S/.test(read(log).replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '')), {
      what: 'the run in the pane to end and its summary to be recorded',
      timeoutMs: 30_000,
    });
    expect(readFileSync(done, 'utf8').trim()).toBe('0');

    const terminal = readFileSync(log, 'utf8');
    expect(terminal).toMatch(/\d+ rows read · \d+ addresses validated/); // the progress line
    expect(terminal).toMatch(/\d+% · \d+ rows read/); // with a percentage: the file's size is known
    expect(terminal).toMatch(/\r|\x1b\[\d*G/); // ... rewritten in place
    expect(terminal).toMatch(/waiting \d+ s for the rate limit to reset/);
    expect(terminal).toContain('\x1b[32mvalid'); // then the summary, in colour
    const plain = terminal.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
    expect(plain).toContain(`mailsift: ${ROWS} rows in`);
    expect(plain).toContain(`output    ${output}`);
    // the pauses for the window are counted apart from 429 answers (there were none)
    expect(plain).toMatch(/· [1-9]\d* rate-limit waits? · 0 429 answers/);

    const csv = readFileSync(output, 'utf8');
    expect(csv).not.toMatch(/[\x1b\r]/);
    expect(csv.split('\n').filter(Boolean)).toHaveLength(ROWS + 1);
    expect(api.requests.filter((r) => r.status === 200)).toHaveLength(ROWS / 5);
  });
});
