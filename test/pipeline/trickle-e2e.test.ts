import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { BIN } from '../support/run-cli.js';
import { waitFor } from '../support/wait.js';

const KEY = 'trickle-key';
let server: FaultServer | undefined;
afterEach(async () => {
  await server?.close();
});

describe('a trickling pipe (tail -f | mailsift validate)', () => {
  it('answers each address while stdin stays open, and Ctrl-C ends the wait for more', async () => {
    server = await startFaultServer({ apiKey: KEY });
    const child = spawn(process.execPath, [BIN, 'validate', '--format', 'ndjson'], {
      env: { PATH: process.env.PATH ?? '', MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: server.url },
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.resume();
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      child.stdin.write('first@example.com\n');
      await waitFor(() => stdout.includes('"first@example.com"'), { what: "the first address's answer on stdout", intervalMs: 20 });
      child.stdin.write('invalid.second@example.com\n');
      await waitFor(() => stdout.includes('"invalid.second@example.com"'), { what: "the second address's answer on stdout", intervalMs: 20 });
      // stdin is still open: only an interruption ends the run now
      child.kill('SIGINT');
      expect(await exited).toBe(130);
    } finally {
      child.kill('SIGKILL');
    }
    const rows = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { email: string; status: string });
    expect(rows.map((r) => `${r.email}:${r.status}`)).toEqual(['first@example.com:valid', 'invalid.second@example.com:invalid']);
    expect(server.requests.map((r) => r.emails)).toEqual([['first@example.com'], ['invalid.second@example.com']]);
  });
});
