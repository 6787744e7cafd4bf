import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { BIN, runCli } from '../support/run-cli.js';
import { waitFor } from '../support/wait.js';
import { API_KEY, apiEnv, countDuplicates, readJournal, runAndSignal, seeded, sentEmails, settled } from './helpers.js';

// 500 rows: statuses of every kind, duplicates under another domain case,
// rows the precheck rejects, a quoted cell; 20 per batch, 3 in flight.
function inputCsv(): string {
  const rows = ['id,email,name'];
  for (let i = 0; i < 500; i++) {
    let email = `user${i}@Ex${i % 5}.com`;
    if (i % 10 === 3) email = `invalid${i}@ex${i % 5}.com`;
    if (i % 10 === 7) email = `risky${i}@ex.org`;
    if (i % 17 === 0) email = `unknown${i}@ex.net`;
    if (i % 40 === 39) email = `user${i - 13}@EX${(i - 13) % 5}.COM`;
    if (i === 100) email = '';
    if (i === 300) email = 'not-an-address';
    rows.push(`${i},${email},"Name, ${i}"`);
  }
  return rows.join('\n') + '\n';
}

const ARGS = ['validate', 'in.csv', '-o', 'out.csv', '--batch-size', '20', '--concurrency', '3', '--summary', 's.json'];
const JOURNAL = ['--journal', 'run.journal'];
const BATCH = 20;
const CONCURRENCY = 3;
const serverOptions = { delayMs: 80, shuffle: true };
// Seeds are fixed so that a failure reproduces; JOURNAL_TEST_SEED shifts them all to explore others.
const SEED = Number(process.env.JOURNAL_TEST_SEED ?? 0);

let reference: string;
let dir: string;
let server: FaultServer;

beforeAll(async () => {
  const refDir = await mkdtemp(join(tmpdir(), 'mailsift-ref-'));
  const refServer = await startFaultServer({ ...serverOptions, apiKey: API_KEY, seed: 99 });
  try {
    await writeFile(join(refDir, 'in.csv'), inputCsv());
    const r = await runCli(ARGS, { cwd: refDir, env: apiEnv(refServer) });
    expect(r.code, r.stderr).toBe(0);
    reference = await readFile(join(refDir, 'out.csv'), 'utf8');
    expect(reference.split('\n')).toHaveLength(502);
  } finally {
    await refServer.close();
    await rm(refDir, { recursive: true, force: true });
  }
});

async function fresh(seed: number): Promise<void> {
  dir = await mkdtemp(join(tmpdir(), 'mailsift-resume-'));
  await writeFile(join(dir, 'in.csv'), inputCsv());
  server = await startFaultServer({ ...serverOptions, apiKey: API_KEY, seed });
}

afterEach(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

const out = (): Promise<string> => readFile(join(dir, 'out.csv'), 'utf8');
const summary = async (): Promise<Record<string, number>> => JSON.parse(await readFile(join(dir, 's.json'), 'utf8'));

/** the interrupted output must be the reference's first rows: flushed in order, nothing invented */
async function expectPrefixOfReference(): Promise<void> {
  const text = await out();
  expect(reference.startsWith(text)).toBe(true);
  expect(text.endsWith('\n')).toBe(true);
}

async function finishAndCompare(firstRunRequests: number): Promise<string[]> {
  const r = await runCli([...ARGS, ...JOURNAL], { cwd: dir, env: apiEnv(server) });
  expect(r.code, r.stderr).toBe(0);
  expect(await out()).toBe(reference);
  return sentEmails(server, firstRunRequests);
}

describe('interrupt and resume with --journal', () => {
  it.each([
    ['SIGINT', 130, 11, /^mailsift: interrupted: sending nothing more/m],
    ['SIGTERM', 143, 12, /^mailsift: terminated: sending nothing more/m],
    // a closed terminal or SSH session, Ctrl-\, a script's signal: the same clean-up, 128 + the number
    ['SIGHUP', 129, 14, /^mailsift: terminated \(SIGHUP\): sending nothing more/m],
    ['SIGQUIT', 131, 15, /^mailsift: terminated \(SIGQUIT\): sending nothing more/m],
    ['SIGUSR2', 140, 16, /^mailsift: terminated \(SIGUSR2\): sending nothing more/m],
    ['SIGALRM', 142, 17, /^mailsift: terminated \(SIGALRM\): sending nothing more/m],
  ] as const)('%s: exit %d, journal whole, re-run pays for nothing twice (seed %d)', async (sig, code, seed, notice) => {
    await fresh(seed + SEED);
    const rand = seeded(seed + SEED);
    const k = 1 + Math.floor(rand() * 10);
    const r1 = await runAndSignal([...ARGS, ...JOURNAL], apiEnv(server), () => server.requests.length >= k, sig, Math.floor(rand() * 80), dir);
    expect(r1.signalled).toBe(true);
    expect(r1.code, r1.stderr).toBe(code);
    expect(r1.stderr).toMatch(notice);
    expect(r1.stderr).toContain('run the same command again');
    await expectPrefixOfReference();

    const journal = await readJournal(join(dir, 'run.journal'));
    expect(journal.tornTail).toBe(0);
    expect(journal.header).toMatchObject({ mailsift: 'journal', engine: 'api', baseUrl: server.url });
    expect(await readFile(join(dir, 'run.journal'), 'utf8')).not.toContain(API_KEY);
    const first = sentEmails(server);
    // In-flight requests were waited for: everything paid for is in the journal.
    expect(new Set(journal.emails)).toEqual(new Set(first));

    const second = await finishAndCompare(server.requests.length);
    expect(countDuplicates([...first, ...second])).toEqual([]);
    expect((await summary()).fromJournal).toBe(new Set(first.map((e) => e.toLowerCase())).size);
  });

  it('SIGKILL: the journal is not corrupt and the re-run resends only what was in flight (seed 13)', async () => {
    await fresh(13 + SEED);
    const rand = seeded(13 + SEED);
    const k = 2 + Math.floor(rand() * 10);
    const r1 = await runAndSignal([...ARGS, ...JOURNAL], apiEnv(server), () => server.requests.length >= k, 'SIGKILL', Math.floor(rand() * 80), dir);
    expect([r1.signalled, r1.signal], r1.stderr).toEqual([true, 'SIGKILL']);
    await settled(server);
    const journal = await readJournal(join(dir, 'run.journal'));
    const first = sentEmails(server);
    const journaled = new Set(journal.emails);

    const second = await finishAndCompare(server.requests.length);
    expect(second.filter((e) => journaled.has(e))).toEqual([]);
    const twice = countDuplicates([...first, ...second]);
    expect(twice.every((e) => !journaled.has(e))).toBe(true);
    expect(twice.length).toBeLessThanOrEqual(BATCH * CONCURRENCY);
  });

  it('survives a seeded series of SIGINT, SIGKILL and SIGTERM before finishing (seed 21)', async () => {
    await fresh(21 + SEED);
    const rand = seeded(21 + SEED);
    const unanswered = new Set<string>();
    for (const sig of ['SIGINT', 'SIGKILL', 'SIGTERM'] as const) {
      const before = server.requests.length;
      const k = before + 1 + Math.floor(rand() * 4);
      const r = await runAndSignal([...ARGS, ...JOURNAL], apiEnv(server), () => server.requests.length >= k, sig, Math.floor(rand() * 80), dir);
      expect(r.signalled, r.stderr).toBe(true);
      if (sig === 'SIGKILL') {
        await settled(server);
        const kept = new Set((await readJournal(join(dir, 'run.journal'))).emails);
        for (const e of sentEmails(server, before)) if (!kept.has(e)) unanswered.add(e);
      } else {
        expect(r.code).toBe(sig === 'SIGINT' ? 130 : 143);
      }
    }
    const all = [...sentEmails(server), ...(await finishAndCompare(server.requests.length))];
    expect(countDuplicates(all).filter((e) => !unanswered.has(e))).toEqual([]);
  });

  it('Ctrl-C sends nothing more, not even batches queued inside the API client', async () => {
    // The client sends its first request alone until it learns the rate limit: the
    // other batches wait in its queue, and must never go out after the signal.
    dir = await mkdtemp(join(tmpdir(), 'mailsift-resume-'));
    await writeFile(join(dir, 'in.csv'), inputCsv());
    server = await startFaultServer({ apiKey: API_KEY, delayMs: 1500 });
    const r = await runAndSignal([...ARGS, ...JOURNAL], apiEnv(server), () => server.requests.length >= 1, 'SIGINT', 50, dir);
    expect([r.signalled, r.code]).toEqual([true, 130]);
    expect(server.requests).toHaveLength(1);
    expect((await readJournal(join(dir, 'run.journal'))).emails).toHaveLength(BATCH);
  });

  it('a second Ctrl-C abandons requests that hang; what was answered is kept', async () => {
    let hang = true;
    dir = await mkdtemp(join(tmpdir(), 'mailsift-resume-'));
    await writeFile(join(dir, 'in.csv'), inputCsv());
    server = await startFaultServer({ apiKey: API_KEY, fault: ({ index }) => (hang && index >= 2 ? 'hang' : undefined) });
    const child = spawn(process.execPath, [BIN, ...ARGS, ...JOURNAL], { cwd: dir, env: apiEnv(server), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    await waitFor(() => server.requests.length >= 4, { what: 'four requests to reach the server' });
    child.kill('SIGINT');
    await waitFor(() => stderr.includes('interrupted'), { what: 'the run to say it was interrupted' });
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stderr).toContain('stopping now');
    expect((await readJournal(join(dir, 'run.journal'))).emails).toHaveLength(2 * BATCH);

    hang = false;
    await finishAndCompare(server.requests.length);
  });

  it('without --journal: flushes the rows so far, exit 130, and says how to avoid paying again', async () => {
    await fresh(31);
    const r = await runAndSignal(ARGS, apiEnv(server), () => server.requests.length >= 5, 'SIGINT', 0, dir);
    expect(r.code).toBe(130);
    expect(r.stderr).toContain('add --journal FILE');
    await expectPrefixOfReference();
    expect((await out()).split('\n').length).toBeGreaterThan(2);
    // the summary says the run is partial: rows written, of the rows read
    // (before the input's end: "144 rows written, of 165 read; the rest of the input was not read")
    const partial = /interrupted: ([\d,]+)(?: of ([\d,]+) rows written| rows? written, of ([\d,]+) read)/.exec(r.stderr);
    expect(partial, r.stderr).not.toBeNull();
    const [written, read] = [Number(partial![1]!.replace(/,/g, '')), Number((partial![2] ?? partial![3])!.replace(/,/g, ''))];
    expect(written).toBe((await out()).trim().split('\n').length - 1);
    expect(read).toBeGreaterThanOrEqual(written);
  });

  it('records no verdict for a row that got none: the re-run retries it and nothing else', async () => {
    let omit = true;
    dir = await mkdtemp(join(tmpdir(), 'mailsift-resume-'));
    server = await startFaultServer({ apiKey: API_KEY, omit: (email) => omit && email === 'lost@example.com' });
    await writeFile(join(dir, 'in.txt'), 'a@example.com\nlost@example.com\nb@example.com\n');
    const args = ['validate', 'in.txt', '-o', 'out.csv', '--retries', '1', ...JOURNAL];
    const r1 = await runCli(args, { cwd: dir, env: apiEnv(server) });
    expect(r1.code, r1.stderr).toBe(4);
    expect((await readJournal(join(dir, 'run.journal'))).emails.sort()).toEqual(['a@example.com', 'b@example.com']);

    omit = false;
    const before = server.requests.length;
    const r2 = await runCli(args, { cwd: dir, env: apiEnv(server) });
    expect(r2.code, r2.stderr).toBe(0);
    expect(sentEmails(server, before)).toEqual(['lost@example.com']);
    expect(await out()).toMatch(/^lost@example\.com,valid,/m);
  });

  it('refuses a journal of another job with exit 2 and one line, creating no output', async () => {
    await fresh(41);
    // --no-dns: this machine may have no DNS, and DNS that fails the run is exit 4
    const r1 = await runCli([...ARGS, ...JOURNAL, '--engine', 'local', '--no-dns'], { cwd: dir, env: apiEnv(server) });
    expect(r1.code, r1.stderr).toBe(0);
    await rm(join(dir, 'out.csv'));
    const r2 = await runCli([...ARGS, ...JOURNAL], { cwd: dir, env: apiEnv(server) });
    expect(r2.code).toBe(2);
    expect(r2.stderr).toMatch(/^mailsift: --journal run\.journal belongs to another job: .*--engine local.*delete run\.journal to start over\n$/);
    expect(existsSync(join(dir, 'out.csv'))).toBe(false);
    expect(server.requests).toHaveLength(0);
  });

  it('a journal that fills its disk: exit 1 and one line naming it; the re-run finishes, paying again only for what was not recorded', async () => {
    await fresh(31 + SEED);
    // A file-size limit stands in for a full disk: past 4 KiB (8 in bash) the journal's writes fail (EFBIG).
    // XFSZ is ignored so that the write fails instead of the signal killing the process.
    const node = JSON.stringify(process.execPath);
    const args = ['validate', 'in.csv', '--batch-size', '20', '--concurrency', '3', ...JOURNAL].join(' ');
    const r1 = await runInShell(`trap '' XFSZ; ulimit -f 8; exec ${node} ${JSON.stringify(BIN)} ${args} > /dev/null`, dir, apiEnv(server));
    expect(r1.code, r1.stderr).toBe(74); // issue 13: a full disk is no bug (it was 1)
    expect(r1.stderr).toMatch(/^mailsift: cannot write --journal run\.journal: EFBIG \(.*\); make room or give another path, then run again with the same file: .*\n$/);
    const journal = await readJournal(join(dir, 'run.journal'));
    expect(journal.emails.length).toBeGreaterThan(0);
    const journaled = new Set(journal.emails);
    const first = sentEmails(server);

    const second = await finishAndCompare(server.requests.length);
    expect(second.filter((e) => journaled.has(e))).toEqual([]);
    // paid twice: at most the batches whose answers could not be recorded
    expect(countDuplicates([...first, ...second]).length).toBeLessThanOrEqual(BATCH * CONCURRENCY);
  });
});

/** `script` run by sh in `cwd`, with the clean environment runCli gives plus `env`. */
function runInShell(script: string, cwd: string, env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', script], { cwd, env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}
