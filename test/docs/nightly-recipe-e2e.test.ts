import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { BIN } from '../support/run-cli.js';
import { missingTool } from '../support/tools.js';

// The README's nightly job, run as written on two nights, with the clock of
// each night faked (libfaketime: `faketime`, from Debian), not waited for.
// Nothing may be paid twice within --cache-ttl, and nothing reused past it:
// the recipe once gave every night the same journal, which served each
// verdict again forever (night 2 took 18,875 of 25,000 from it).
const root = fileURLToPath(new URL('../..', import.meta.url));
const FAKETIME = spawnSync('faketime', ['-f', '+0', 'true']).status === 0;
const KEY = 'nightly-test-key';

/** The README's nightly command: the recipe line with --journal, and the lines it continues onto. */
function nightlyRecipe(): string {
  const lines = readFileSync(join(root, 'README.md'), 'utf8').split('\n');
  const start = lines.findIndex((l) => /^npx mailsift validate .*--journal/.test(l));
  if (start < 0) throw new Error('README.md has no nightly recipe (npx mailsift validate … --journal …)');
  let end = start;
  while (lines[end]!.endsWith('\\')) end++;
  return lines.slice(start, end + 1).join('\n');
}

const addresses = (from: number, to: number): string[] => Array.from({ length: to - from }, (_, i) => `user${from + i}@example.com`);

describe.skipIf(missingTool('faketime', !FAKETIME && 'not found (apt-get install faketime)'))('the nightly recipe over two nights', () => {
  let server: FaultServer;
  const dir = mkdtempSync(join(tmpdir(), 'mailsift-nightly-'));

  beforeAll(async () => {
    server = await startFaultServer({ apiKey: KEY });
  });
  afterAll(() => server.close());

  /** Runs `command` in `cwd` at `when` (a UTC date and time) on signups.csv holding `emails`; what it sent and its summary. */
  async function night(cwd: string, command: string, when: string, emails: string[]) {
    writeFileSync(join(cwd, 'signups.csv'), `name,email\n${emails.map((e) => `${e.split('@')[0]},${e}`).join('\n')}\n`);
    const before = server.requests.length;
    const script = command.replace(/^npx mailsift /, `"${process.execPath}" "${BIN}" `);
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn('faketime', [when, 'bash', '-c', script], {
        cwd,
        env: {
          PATH: process.env.PATH ?? '',
          TZ: 'UTC',
          FAKETIME_DONT_FAKE_MONOTONIC: '1',
          MAILSIFT_BASE_URL: server.url,
          MAILSIFT_API_KEY: KEY,
          NO_COLOR: '1',
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let err = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.on('error', reject);
      child.on('close', (c) => {
        clearTimeout(timer);
        resolve({ code: c, stderr: err });
      });
    });
    const summary = JSON.parse(readFileSync(join(cwd, 'summary.json'), 'utf8')) as { fromJournal: number; fromCache: number; total: number };
    const sent = server.requests.slice(before).flatMap((r) => r.emails);
    return { code, stderr, summary, sent: new Set(sent) };
  }

  const monday = addresses(0, 100);
  // the next list: three quarters of it seen the night before
  const tuesday = addresses(25, 125);

  it.each([
    ['the next night: what was paid for is reused from the cache, not paid again', '2024-03-02 02:15:00', 25, 75],
    ['35 nights later, past --cache-ttl 30d: every address is asked again, none served from the journal', '2024-04-05 02:15:00', 100, 0],
  ])(
    '%s',
    async (_name, second, paid, reused) => {
      const cwd = join(dir, second.slice(0, 10));
      mkdirSync(cwd);
      const recipe = nightlyRecipe();
      const first = await night(cwd, recipe, '2024-03-01 02:15:00', monday);
      expect(first.code, first.stderr).toBe(0);
      expect(first.sent.size).toBe(100);
      const next = await night(cwd, recipe, second, tuesday);
      expect(next.code, next.stderr).toBe(0);
      expect(next.summary.total).toBe(100);
      expect(next.sent.size, `sent ${next.sent.size}; summary ${JSON.stringify(next.summary)}`).toBe(paid);
      expect(next.summary.fromCache + next.summary.fromJournal).toBe(reused);
      // a journal resumes its own night's job: what another night paid for comes from the cache, within the TTL
      expect(next.summary.fromJournal).toBe(0);
    },
    120_000,
  );

  it('a journal given every night under one name (what the recipe once said) never serves a verdict past --cache-ttl', async () => {
    const cwd = join(dir, 'one-journal');
    mkdirSync(cwd);
    const oneJournal =
      'npx mailsift validate signups.csv -o checked.csv --journal signups.journal --cache verdicts.cache --cache-ttl 30d --summary summary.json';
    const first = await night(cwd, oneJournal, '2024-03-01 02:15:00', monday);
    expect(first.code, first.stderr).toBe(0);
    const next = await night(cwd, oneJournal, '2024-04-05 02:15:00', tuesday);
    expect(next.code, next.stderr).toBe(0);
    expect(next.sent.size).toBe(100);
    expect(next.summary.fromJournal).toBe(0);
    expect(next.stderr).toContain(
      '--journal signups.journal holds a job begun 2024-03-01 02:15 UTC, longer ago than --cache-ttl 30d: its verdicts are too old to reuse, so it is begun afresh',
    );
  }, 120_000);
});
