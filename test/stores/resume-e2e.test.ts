import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, type ExpectStatic, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { BIN } from '../support/run-cli.js';
import { waitFor } from '../support/wait.js';
import { runInProcess } from '../support/run-in-process.js';
import { API_KEY, apiEnv, countDuplicates, type JournalCheck, readJournal, runAndSignal, seeded, sentEmails, settled } from './helpers.js';

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

/** the job's arguments, its paths absolute: an in-process run needs no change of directory, so runs of several cases overlap */
const argsIn = (dir: string, journal = true): string[] => [
  'validate',
  join(dir, 'in.csv'),
  '-o',
  join(dir, 'out.csv'),
  '--batch-size',
  '20',
  '--concurrency',
  '3',
  '--summary',
  join(dir, 's.json'),
  ...(journal ? ['--journal', join(dir, 'run.journal')] : []),
];
const BATCH = 20;
const CONCURRENCY = 3;
const serverOptions = { delayMs: 80, shuffle: true };
// Seeds are fixed so that a failure reproduces; JOURNAL_TEST_SEED shifts them all to explore others.
const SEED = Number(process.env.JOURNAL_TEST_SEED ?? 0);

let reference: string;

beforeAll(async () => {
  const refDir = await mkdtemp(join(tmpdir(), 'mailsift-ref-'));
  const refServer = await startFaultServer({ ...serverOptions, apiKey: API_KEY, seed: 99 });
  try {
    await writeFile(join(refDir, 'in.csv'), inputCsv());
    const r = await runInProcess(argsIn(refDir, false), { env: apiEnv(refServer) });
    expect(r.code, r.stderr).toBe(0);
    reference = await readFile(join(refDir, 'out.csv'), 'utf8');
    expect(reference.split('\n')).toHaveLength(502);
  } finally {
    await refServer.close();
    await rm(refDir, { recursive: true, force: true });
  }
});

/** one case's job: its directory, the input, and a fault server of its own, all gone when the case ends */
interface Job {
  dir: string;
  server: FaultServer;
  args: string[];
  out(): Promise<string>;
  summary(): Promise<Record<string, number>>;
  journal(): Promise<JournalCheck>;
}

async function fresh(onTestFinished: OnTestFinished, options: Parameters<typeof startFaultServer>[0]): Promise<Job> {
  const dir = await mkdtemp(join(tmpdir(), 'mailsift-resume-'));
  await writeFile(join(dir, 'in.csv'), inputCsv());
  const server = await startFaultServer({ apiKey: API_KEY, ...options });
  onTestFinished(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });
  return {
    dir,
    server,
    args: argsIn(dir),
    out: () => readFile(join(dir, 'out.csv'), 'utf8'),
    summary: async () => JSON.parse(await readFile(join(dir, 's.json'), 'utf8')) as Record<string, number>,
    journal: () => readJournal(join(dir, 'run.journal')),
  };
}
type OnTestFinished = (fn: () => Promise<void>) => void;

/** the interrupted output must be the reference's first rows: flushed in order, nothing invented */
async function expectPrefixOfReference(job: Job, expect: ExpectStatic): Promise<void> {
  const text = await job.out();
  expect(reference.startsWith(text)).toBe(true);
  expect(text.endsWith('\n')).toBe(true);
}

/**
 * The run that finishes the job, in-process: resuming is the journal's work, not the
 * process's; what a signal does to the first run is what needs the binary.
 */
async function finishAndCompare(job: Job, expect: ExpectStatic): Promise<string[]> {
  const from = job.server.requests.length;
  const r = await runInProcess(job.args, { env: apiEnv(job.server) });
  expect(r.code, r.stderr).toBe(0);
  expect(await job.out()).toBe(reference);
  return sentEmails(job.server, from);
}

// Each case has its directory and server of its own and mostly waits (for the server's 80 ms
// answers, for the moment to signal): the signal cases run side by side.
describe('interrupt and resume with --journal', () => {
  it.concurrent.for([
    ['SIGINT', 130, 11, /^mailsift: interrupted: sending nothing more/m],
    ['SIGTERM', 143, 12, /^mailsift: terminated: sending nothing more/m],
    // a closed terminal or SSH session, Ctrl-\, a script's signal: the same clean-up, 128 + the number
    ['SIGHUP', 129, 14, /^mailsift: terminated \(SIGHUP\): sending nothing more/m],
    ['SIGQUIT', 131, 15, /^mailsift: terminated \(SIGQUIT\): sending nothing more/m],
    ['SIGUSR2', 140, 16, /^mailsift: terminated \(SIGUSR2\): sending nothing more/m],
    ['SIGALRM', 142, 17, /^mailsift: terminated \(SIGALRM\): sending nothing more/m],
  ] as const)('%s: exit %d, journal whole, re-run pays for nothing twice (seed %d)', async ([sig, code, seed, notice], { expect, onTestFinished }) => {
    const job = await fresh(onTestFinished, { ...serverOptions, seed: seed + SEED });
    const { server } = job;
    const rand = seeded(seed + SEED);
    const k = 1 + Math.floor(rand() * 10);
    const r1 = await runAndSignal(job.args, apiEnv(server), () => server.requests.length >= k, sig, Math.floor(rand() * 80), job.dir);
    expect(r1.signalled).toBe(true);
    expect(r1.code, r1.stderr).toBe(code);
    expect(r1.stderr).toMatch(notice);
    expect(r1.stderr).toContain('run the same command again');
    await expectPrefixOfReference(job, expect);

    const journal = await job.journal();
    expect(journal.tornTail).toBe(0);
    expect(journal.header).toMatchObject({ mailsift: 'journal', engine: 'api', baseUrl: server.url });
    expect(await readFile(join(job.dir, 'run.journal'), 'utf8')).not.toContain(API_KEY);
    const first = sentEmails(server);
    // In-flight requests were waited for: everything paid for is in the journal.
    expect(new Set(journal.emails)).toEqual(new Set(first));

    const second = await finishAndCompare(job, expect);
    expect(countDuplicates([...first, ...second])).toEqual([]);
    expect((await job.summary()).fromJournal).toBe(new Set(first.map((e) => e.toLowerCase())).size);
  });

  it.concurrent('SIGKILL: the journal is not corrupt and the re-run resends only what was in flight (seed 13)', async ({ expect, onTestFinished }) => {
    const job = await fresh(onTestFinished, { ...serverOptions, seed: 13 + SEED });
    const { server } = job;
    const rand = seeded(13 + SEED);
    const k = 2 + Math.floor(rand() * 10);
    const r1 = await runAndSignal(job.args, apiEnv(server), () => server.requests.length >= k, 'SIGKILL', Math.floor(rand() * 80), job.dir);
    expect([r1.signalled, r1.signal], r1.stderr).toEqual([true, 'SIGKILL']);
    await settled(server);
    const journal = await job.journal();
    const first = sentEmails(server);
    const journaled = new Set(journal.emails);

    const second = await finishAndCompare(job, expect);
    expect(second.filter((e) => journaled.has(e))).toEqual([]);
    const twice = countDuplicates([...first, ...second]);
    expect(twice.every((e) => !journaled.has(e))).toBe(true);
    expect(twice.length).toBeLessThanOrEqual(BATCH * CONCURRENCY);
  });

  it.concurrent('survives a seeded series of SIGINT, SIGKILL and SIGTERM before finishing (seed 21)', async ({ expect, onTestFinished }) => {
    const job = await fresh(onTestFinished, { ...serverOptions, seed: 21 + SEED });
    const { server } = job;
    const rand = seeded(21 + SEED);
    const unanswered = new Set<string>();
    for (const sig of ['SIGINT', 'SIGKILL', 'SIGTERM'] as const) {
      const before = server.requests.length;
      const k = before + 1 + Math.floor(rand() * 4);
      const r = await runAndSignal(job.args, apiEnv(server), () => server.requests.length >= k, sig, Math.floor(rand() * 80), job.dir);
      expect(r.signalled, r.stderr).toBe(true);
      if (sig === 'SIGKILL') {
        await settled(server);
        const kept = new Set((await job.journal()).emails);
        for (const e of sentEmails(server, before)) if (!kept.has(e)) unanswered.add(e);
      } else {
        expect(r.code).toBe(sig === 'SIGINT' ? 130 : 143);
      }
    }
    const all = [...sentEmails(server), ...(await finishAndCompare(job, expect))];
    expect(countDuplicates(all).filter((e) => !unanswered.has(e))).toEqual([]);
  });

  it.concurrent('without --journal: flushes the rows so far, exit 130, and says how to avoid paying again', async ({ expect, onTestFinished }) => {
    const job = await fresh(onTestFinished, { ...serverOptions, seed: 31 });
    const { server } = job;
    const r = await runAndSignal(argsIn(job.dir, false), apiEnv(server), () => server.requests.length >= 5, 'SIGINT', 0, job.dir);
    expect(r.code).toBe(130);
    expect(r.stderr).toContain('add --journal FILE');
    await expectPrefixOfReference(job, expect);
    expect((await job.out()).split('\n').length).toBeGreaterThan(2);
    // the summary says the run is partial: rows written, of the rows read
    // (before the input's end: "144 rows written, of 165 read; the rest of the input was not read")
    const partial = /interrupted: ([\d,]+)(?: of ([\d,]+) rows written| rows? written, of ([\d,]+) read)/.exec(r.stderr);
    expect(partial, r.stderr).not.toBeNull();
    const [written, read] = [Number(partial![1]!.replace(/,/g, '')), Number((partial![2] ?? partial![3])!.replace(/,/g, ''))];
    expect(written).toBe((await job.out()).trim().split('\n').length - 1);
    expect(read).toBeGreaterThanOrEqual(written);
  });

  it.concurrent('a journal that fills its disk: exit 1 and one line naming it; the re-run finishes, paying again only for what was not recorded', async ({
    expect,
    onTestFinished,
  }) => {
    const job = await fresh(onTestFinished, { ...serverOptions, seed: 31 + SEED });
    const { server } = job;
    // A file-size limit stands in for a full disk: past 4 KiB (8 in bash) the journal's writes fail (EFBIG).
    // XFSZ is ignored so that the write fails instead of the signal killing the process.
    const node = JSON.stringify(process.execPath);
    const args = ['validate', 'in.csv', '--batch-size', '20', '--concurrency', '3', '--journal', 'run.journal'].join(' ');
    const r1 = await runInShell(`trap '' XFSZ; ulimit -f 8; exec ${node} ${JSON.stringify(BIN)} ${args} > /dev/null`, job.dir, apiEnv(server));
    expect(r1.code, r1.stderr).toBe(74); // a full disk is no bug (it was 1)
    expect(r1.stderr).toMatch(
      /^mailsift: cannot write --journal run\.journal: EFBIG \(.*\); make room or give another path, then run again with the same file: .*\n$/,
    );
    const journal = await job.journal();
    expect(journal.emails.length).toBeGreaterThan(0);
    const journaled = new Set(journal.emails);
    const first = sentEmails(server);

    const second = await finishAndCompare(job, expect);
    expect(second.filter((e) => journaled.has(e))).toEqual([]);
    // paid twice: at most the batches whose answers could not be recorded
    expect(countDuplicates([...first, ...second]).length).toBeLessThanOrEqual(BATCH * CONCURRENCY);
  });

  // These two hold a server's answer (1.5 s, or for ever) while the run is signalled: alone, so
  // that a busy machine does not stretch the moment between the request and the signal.
  it('Ctrl-C sends nothing more, not even batches queued inside the API client', async ({ onTestFinished }) => {
    // The client sends its first request alone until it learns the rate limit: the
    // other batches wait in its queue, and must never go out after the signal.
    const job = await fresh(onTestFinished, { delayMs: 1500 });
    const { server } = job;
    const r = await runAndSignal(job.args, apiEnv(server), () => server.requests.length >= 1, 'SIGINT', 50, job.dir);
    expect([r.signalled, r.code]).toEqual([true, 130]);
    expect(server.requests).toHaveLength(1);
    expect((await job.journal()).emails).toHaveLength(BATCH);
  });

  it('a second Ctrl-C abandons requests that hang; what was answered is kept', async ({ onTestFinished }) => {
    let hang = true;
    const job = await fresh(onTestFinished, { fault: ({ index }) => (hang && index >= 2 ? 'hang' : undefined) });
    const { server } = job;
    const child = spawn(process.execPath, [BIN, ...job.args], { cwd: job.dir, env: apiEnv(server), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    await waitFor(() => server.requests.length >= 4, { what: 'four requests to reach the server' });
    child.kill('SIGINT');
    await waitFor(() => stderr.includes('interrupted'), { what: 'the run to say it was interrupted' });
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stderr).toContain('stopping now');
    expect((await job.journal()).emails).toHaveLength(2 * BATCH);

    hang = false;
    await finishAndCompare(job, expect);
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
