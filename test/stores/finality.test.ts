import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer, type Zone } from '../support/dns-server.js';
import { startFaultServer } from '../support/fault-server.js';
import { parseCsv } from '../support/run-cli.js';
import { runInProcess } from '../support/run-in-process.js';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js';
import { API_KEY, apiEnv, sentEmails } from './helpers.js';

// What a journal and a cache keep (PRODUCT.md §3, keptBy in src/reason.ts):
// only what is determined, and only for a run that asks no more than the
// verdict rests on. Each case runs twice with the same --journal and --cache:
// the condition that left rows undetermined clears, and the second run must
// ask again rather than repeat the first run's answer.

let dir: string;
let dns: TestDnsServer;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mailsift-final-'));
  dns = await startDnsServer();
});
afterEach(async () => {
  await dns.close();
  await rm(dir, { recursive: true, force: true });
});

const mx = (host: string): Zone => ({ mx: [{ exchange: host, priority: 10 }] });

/** email, status and reason of each row */
function rowsOf(csv: string): string[][] {
  const [header, ...rows] = parseCsv(csv);
  const at = (name: string) => header!.indexOf(name);
  return rows.map((r) => [r[at('email')]!, r[at('status')]!, r[at('reason')]!]);
}

async function run(list: string[], extra: string[], env?: Record<string, string>) {
  await writeFile(join(dir, 'list.txt'), list.join('\n') + '\n');
  const args = ['validate', 'list.txt', '--journal', 'run.journal', '--cache', 'verdicts.cache', '--summary', 'summary.json', '-q', ...extra];
  const r = await runInProcess(args, { cwd: dir, env, timeoutMs: 45_000 });
  const summary = r.code === 0 || r.code === 4 ? JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) : undefined;
  return { ...r, rows: rowsOf(r.stdout), summary };
}

const local = (): string[] => ['--engine', 'local', '--dns-server', dns.address, '--dns-timeout', '10000'];

describe('a verdict made with less evidence never answers a run that asks for more', () => {
  it('--no-dns, then DNS, on one cache: the syntax-only valid of a domain that does not exist is asked again', async () => {
    dns.zones = { ...dns.zones, 'real.test': mx('mx.real.test') };
    const list = ['ann@real.test', 'bob@nowhere.test'];
    const shallow = await run(list, [...local(), '--no-dns']);
    expect(shallow.code, shallow.stderr).toBe(0);
    expect(shallow.rows).toEqual([
      ['ann@real.test', 'valid', ''],
      ['bob@nowhere.test', 'valid', ''],
    ]);

    const deep = await run(list, local());
    expect(deep.code, deep.stderr).toBe(0);
    expect(deep.rows).toEqual([
      ['ann@real.test', 'valid', ''],
      ['bob@nowhere.test', 'invalid', 'domain_not_found'],
    ]);
    expect([deep.summary.fromJournal, deep.summary.fromCache]).toEqual([0, 0]);
    expect(dns.queries).toEqual(expect.arrayContaining(['MX real.test', 'MX nowhere.test']));

    // and the stronger verdicts answer a run that asks for less
    const again = await run(list, [...local(), '--no-dns']);
    expect(again.rows).toEqual(deep.rows);
    expect(again.summary.fromJournal).toBe(2);
  }, 60_000);

  describe('with a mail server', () => {
    let smtp: TestSmtpServer;
    beforeEach(async () => {
      smtp = await startSmtpServer();
      dns.zones = { ...dns.zones, 'ok.test': mx('mx.ok.test'), 'mx.ok.test': { a: ['127.0.0.1'] } };
    });
    afterEach(async () => {
      await smtp.close();
    });
    const smtpFlags = (): string[] => [
      ...local(),
      '--smtp',
      '--smtp-port',
      String(smtp.port),
      '--smtp-timeout',
      '2000',
      '--smtp-retry-delay',
      '0.2',
      '--smtp-helo',
      'checker.example',
    ];

    it('DNS, then --smtp, on one cache: the DNS-only valid is asked again over SMTP', async () => {
      const list = ['ann@ok.test', 'unknown-bob@ok.test'];
      const dnsOnly = await run(list, local());
      expect(dnsOnly.code, dnsOnly.stderr).toBe(0);
      expect(dnsOnly.rows).toEqual([
        ['ann@ok.test', 'valid', ''],
        ['unknown-bob@ok.test', 'valid', ''],
      ]);

      const mailbox = await run(list, smtpFlags());
      expect(mailbox.code, mailbox.stderr).toBe(0);
      expect(mailbox.rows).toEqual([
        ['ann@ok.test', 'valid', ''],
        ['unknown-bob@ok.test', 'invalid', 'mailbox_not_found'],
      ]);
      expect(smtp.commands()).toEqual(expect.arrayContaining(['RCPT TO:<ann@ok.test>', 'RCPT TO:<unknown-bob@ok.test>']));
    }, 60_000);

    it('greylisting, then acceptance, with the same --cache and --journal: the greylisted row is not kept and is asked again', async () => {
      const list = ['ann@ok.test', 'longgrey-cy@ok.test'];
      const deferred = await run(list, smtpFlags());
      expect(deferred.code, deferred.stderr).toBe(0);
      expect(deferred.rows).toEqual([
        ['ann@ok.test', 'valid', ''],
        ['longgrey-cy@ok.test', 'unknown', 'greylisted'],
      ]);

      const rcpts = (): string[] => smtp.commands().filter((c) => c === 'RCPT TO:<longgrey-cy@ok.test>');
      const asked = rcpts().length;
      const accepted = await run(list, smtpFlags());
      expect(accepted.code, accepted.stderr).toBe(0);
      expect(accepted.rows).toEqual([
        ['ann@ok.test', 'valid', ''],
        ['longgrey-cy@ok.test', 'valid', ''],
      ]);
      expect(rcpts().length).toBeGreaterThan(asked);
      expect(accepted.summary.fromJournal).toBe(1);
    }, 60_000);
  });
});

describe('a temporary condition is never recorded as final', () => {
  it('a partial outage (one domain’s servers fail, the rest answer), then DNS back: the failed rows are asked again', async () => {
    dns.zones = { ...dns.zones, 'a.test': mx('mx.a.test'), 'b.test': mx('mx.b.test'), 'c.test': mx('mx.c.test'), 'flaky.test': { servfail: true } };
    const list = ['ann@a.test', 'bob@b.test', 'cy@flaky.test', 'di@c.test', 'info@flaky.test'];
    const partial = await run(list, local());
    expect(partial.code, partial.stderr).toBe(0); // a domain in trouble is not an outage of the run
    expect(partial.rows).toEqual([
      ['ann@a.test', 'valid', ''],
      ['bob@b.test', 'valid', ''],
      ['cy@flaky.test', 'unknown', 'dns_error'],
      ['di@c.test', 'valid', ''],
      ['info@flaky.test', 'risky', 'role'],
    ]);
    const recorded = async (file: string) => (await readFile(join(dir, file), 'utf8')).split('\n').slice(1).filter(Boolean);
    expect(await recorded('run.journal')).toHaveLength(3);
    expect(await recorded('verdicts.cache')).toHaveLength(3);

    dns.zones = { ...dns.zones, 'flaky.test': mx('mx.flaky.test') };
    const back = await run(list, local());
    expect(back.code, back.stderr).toBe(0);
    expect(back.rows.map((r) => r[1])).toEqual(['valid', 'valid', 'valid', 'valid', 'risky']);
    expect(back.summary.fromJournal).toBe(3);
  }, 60_000);

  it('the root-cached outage (the resolver answers `. NS` and fails every other question) is exit 4, loud under -q, nothing kept; then DNS back', async () => {
    const domains = Array.from({ length: 20 }, (_, i) => `d${i}.test`);
    const list = domains.map((d, i) => `user${i}@${d}`);
    // only the root zone answers: every other name SERVFAILs
    dns.zones = { '': { a: [] }, ...Object.fromEntries(domains.map((d) => [d, { servfail: true }])) };
    const down = await run(list, local());
    expect(down.code, down.stderr).toBe(4);
    expect(down.stderr).toMatch(/^mailsift: DNS failed: .*20 rows could not be checked/m);
    expect(down.rows.every((r) => r[1] === 'unknown' && r[2] === 'dns_error')).toBe(true);
    expect(down.summary.outage).toEqual({ dns: 20 });
    const recorded = async (file: string) => (await readFile(join(dir, file), 'utf8')).split('\n').slice(1).filter(Boolean);
    expect(await recorded('run.journal')).toEqual([]);
    expect(await recorded('verdicts.cache')).toEqual([]);

    dns.zones = { '': { a: [] }, ...Object.fromEntries(domains.map((d) => [d, mx(`mx.${d}`)])) };
    const back = await run(list, local());
    expect(back.code, back.stderr).toBe(0);
    expect(back.rows.every((r) => r[1] === 'valid')).toBe(true);
    expect([back.summary.fromJournal, back.summary.fromCache]).toEqual([0, 0]);
  }, 60_000);
});

describe('DNS that stops answering mid-run', () => {
  // The resolver answers the first 20 questions about the list's domains, then fails every
  // question but the root zone's (cached): with 40 domains, the last 32 lookups are 12
  // answers and 20 failures, short of the 90% that makes an outage of a list's dead domains.
  it.each([
    ['SERVFAILs', { servfail: true }, '300'],
    ['goes silent', { silent: true }, '500'],
  ] as const)(
    '%s: exit 4, said under -q, the rows after it not kept; then DNS back, they are asked again',
    async (_how, failure, timeout) => {
      let answered = 0;
      let down = true;
      const resolver = await startDnsServer({
        fallback: (name) => {
          if (down && answered >= 20) return failure;
          if (!/^d\d+\.test$/.test(name)) return undefined;
          answered++;
          return mx(`mx.${name}`);
        },
      });
      try {
        const list = Array.from({ length: 40 }, (_, i) => `user${i}@d${i}.test`);
        const flags = ['--engine', 'local', '--dns-server', resolver.address, '--dns-timeout', timeout, '--batch-size', '10'];
        const cut = await run(list, flags);
        expect(cut.code, cut.stderr).toBe(4);
        expect(cut.stderr).toMatch(/^mailsift: DNS failed: .*rows could not be checked/m);
        const valid = cut.rows.filter((r) => r[1] === 'valid').length;
        expect(cut.rows.filter((r) => r[1] !== 'valid').every((r) => r[1] === 'unknown' && r[2] === 'dns_error')).toBe(true);
        expect(valid).toBeGreaterThanOrEqual(10);
        expect(valid).toBeLessThanOrEqual(20);
        const recorded = async (file: string) => (await readFile(join(dir, file), 'utf8')).split('\n').slice(1).filter(Boolean);
        expect(await recorded('run.journal')).toHaveLength(valid);
        expect(await recorded('verdicts.cache')).toHaveLength(valid);

        down = false;
        const back = await run(list, flags);
        expect(back.code, back.stderr).toBe(0);
        expect(back.rows.every((r) => r[1] === 'valid')).toBe(true);
        expect(back.summary.fromJournal).toBe(valid);
      } finally {
        await resolver.close();
      }
    },
    60_000,
  );
});

describe('no unknown row is ever served from --cache by a later run', () => {
  it('the API’s own unknown is journaled for the job, but a later run with the cache asks again', async () => {
    const server = await startFaultServer({ apiKey: API_KEY });
    try {
      const list = ['ann@example.com', 'unknown.bob@example.com'];
      await writeFile(join(dir, 'list.txt'), list.join('\n') + '\n');
      const first = await runInProcess(['validate', 'list.txt', '--journal', 'run.journal', '--cache', 'verdicts.cache'], { cwd: dir, env: apiEnv(server) });
      expect(first.code, first.stderr).toBe(0);
      expect(rowsOf(first.stdout).map((r) => r[1])).toEqual(['valid', 'unknown']);
      // resuming the job: nothing sent again
      const resumed = await runInProcess(['validate', 'list.txt', '--journal', 'run.journal'], { cwd: dir, env: apiEnv(server) });
      expect(resumed.stdout).toBe(first.stdout);
      expect(sentEmails(server)).toEqual(list);
      // a later job on the cache: the unknown is asked again
      const later = await runInProcess(['validate', 'list.txt', '--cache', 'verdicts.cache'], { cwd: dir, env: apiEnv(server) });
      expect(later.stdout).toBe(first.stdout);
      expect(sentEmails(server)).toEqual([...list, 'unknown.bob@example.com']);
    } finally {
      await server.close();
    }
  }, 60_000);
});
