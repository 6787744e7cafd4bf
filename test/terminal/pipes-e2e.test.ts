import { mkdtempSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { runCli } from '../support/run-cli.js';

// The binary with pipes for stdout and stderr: what cron and `| jq` see.
// NO_COLOR is set empty (= unset, per no-color.org) so that only the
// "not a terminal" rule can keep escape codes out.
const ESC = '\x1b';
const dir = mkdtempSync(join(tmpdir(), 'mailsift-pipes-'));
const input = join(dir, 'list.txt');
writeFileSync(input, ['a@example.com', 'invalid1@example.com', 'b@example.com', 'not-an-address', 'a@example.com'].join('\n') + '\n');

describe('validate through pipes', () => {
  let api: FaultServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    api = await startFaultServer();
    env = { MAILSIFT_API_KEY: 'test-key', MAILSIFT_BASE_URL: api.url, NO_COLOR: '', TERM: 'xterm-256color' };
  });
  afterAll(() => api.close());

  it('keeps escape codes out of stdout and stderr, and ends with the summary table', async () => {
    const r = await runCli(['validate', input], { env });
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/^email,status,/);
    expect(r.stdout).not.toContain(ESC);
    expect(r.stderr).not.toContain(ESC);
    expect(r.stderr).not.toContain('\r');
    expect(r.stderr).toContain('mailsift: 5 rows in');
    expect(r.stderr).toMatch(/ {2}invalid +2 +40\.0%/);
    expect(r.stderr).toContain('output    stdout');
    expect(r.stderr).not.toContain('test-key');
  });

  it('--fail-on exits 5 naming the rule; --quiet leaves only that line', async () => {
    const r = await runCli(['validate', input, '-o', join(dir, 'out.csv'), '--quiet', '--fail-on', 'unknown>0,invalid>=40%'], { env });
    expect(r.code).toBe(5);
    expect(r.stderr).toBe('mailsift: --fail-on invalid>=40% holds: invalid is 40.0% (2 of 5 rows)\n');
    expect(r.stdout).toBe('');
  });

  // a bad --fail-on rule, a mistyped flag's suggestion, validate --help: test/cli/plan.test.ts

  it('--dry-run reports what it would send, sends nothing and writes no output file', async () => {
    const before = api.requests.length;
    const out = join(dir, 'dry.csv');
    const r = await runCli(['validate', input, '--dry-run', '--batch-size', '2', '-o', out], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('rows       5 (1 duplicate)');
    expect(r.stdout).toContain('addresses  3 distinct');
    expect(r.stdout).toContain('precheck   1 row rejected without a call');
    expect(r.stdout).toContain('to send    3 addresses in 2 bulk requests (batches of 2, in flight as the server allows, up to 64)');
    expect(r.stdout).not.toContain(ESC);
    expect(api.requests.length).toBe(before);
    expect(existsSync(out)).toBe(false);
  });

  it('--dry-run --journal leaves out what the journal answered, and creates no journal', async () => {
    const journal = join(dir, 'dry.journal');
    const first = await runCli(['validate', input, '--dry-run', '--journal', journal], { env });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('to send    3 addresses');
    expect(existsSync(journal)).toBe(false);
    expect(existsSync(`${journal}.lock`)).toBe(false);

    const real = await runCli(['validate', input, '-o', join(dir, 'journalled.csv'), '--journal', journal], { env });
    expect(real.code, real.stderr).toBe(0);
    const before = api.requests.length;
    const dry = await runCli(['validate', input, '--dry-run', '--journal', journal], { env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('known      3 addresses answered by journal/cache');
    expect(dry.stdout).toContain('to send    0 addresses in 0 bulk requests');
    expect(api.requests.length).toBe(before);
    expect(existsSync(`${journal}.lock`)).toBe(false);
  });

  it('an output that cannot be opened releases the journal (no lock file left behind)', async () => {
    const journal = join(dir, 'locked.journal');
    const r = await runCli(['validate', input, '--journal', journal, '-o', dir], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('it is a directory');
    expect(existsSync(`${journal}.lock`)).toBe(false);
  });

  // issue 31.9: examples printed first scrolled off an 80×24 screen; the short help now fits one, examples included
  it.each([[[]], [['check']], [['serve']]])('mailsift %j --help fits a screen, usage first, examples included', async (cmd) => {
    const r = await runCli([...cmd, '--help'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: mailsift/);
    expect(r.stdout).toContain('\nExamples:\n');
    expect(r.stdout.trimEnd().split('\n').length).toBeLessThanOrEqual(24);
  });
});
