import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../../support/dns-server.js';
import { runInProcess } from '../../support/run-in-process.js';

// Issue 31.1: the run's own DNS failing is not a verdict about the addresses.
// A nightly job (no terminal, --quiet) with the resolver down must fail loudly
// (exit 4, a line on stderr), and keep those rows out of its journal so that
// the next night checks them again.

let dns: TestDnsServer;
let dir: string;
beforeAll(async () => {
  dns = await startDnsServer({
    zones: { 'a.test': { mx: [{ exchange: 'mx.a.test', priority: 10 }] }, 'b.test': { mx: [{ exchange: 'mx.b.test', priority: 10 }] } },
  });
  dir = mkdtempSync(join(tmpdir(), 'mailsift-dns-down-'));
});
afterAll(async () => {
  await dns.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('DNS down in a cron job', () => {
  it('exits 4 with a stderr line saying DNS failed, even with --quiet; a re-run with the same --journal checks those rows again', async () => {
    const input = join(dir, 'signups.csv');
    writeFileSync(input, 'id,email\n1,ann@a.test\n2,bob@b.test\n3,not-an-address\n4,cy@a.test\n');
    const journal = join(dir, 'run.journal');
    const summaryFile = join(dir, 'summary.json');
    const report = join(dir, 'report.html');
    const args = [
      'validate',
      input,
      '--engine',
      'local',
      '--dns-server',
      dns.address,
      '--dns-timeout',
      '300',
      '--quiet',
      '--journal',
      journal,
      '--summary',
      summaryFile,
      '--format',
      'json',
    ];

    dns.down = true;
    const night1 = await runInProcess([...args, '--report', report]);
    expect(night1.code).toBe(4);
    expect(night1.stderr).toMatch(/^mailsift: DNS failed: .*3 rows could not be checked \(unknown, dns_error\)/m);
    expect(night1.stderr.trim().split('\n')).toHaveLength(1);
    const rows1 = JSON.parse(night1.stdout).results as { email: string; status: string; reason: string }[];
    expect(rows1.map((r) => [r.email, r.status, r.reason])).toEqual([
      ['ann@a.test', 'unknown', 'dns_error'],
      ['bob@b.test', 'unknown', 'dns_error'],
      ['not-an-address', 'invalid', 'syntax'],
      ['cy@a.test', 'unknown', 'dns_error'],
    ]);
    const summary1 = JSON.parse(readFileSync(summaryFile, 'utf8'));
    expect(summary1.outage).toEqual({ dns: 3 });
    expect(readFileSync(report, 'utf8')).toMatch(/<p class="notice" role="alert" data-figure="outage">DNS failed: /);

    dns.down = false;
    const asked = dns.queries.length;
    const night2 = await runInProcess(args);
    expect(night2.stderr).toBe('');
    expect(night2.code).toBe(0);
    const rows2 = JSON.parse(night2.stdout).results as { email: string; status: string }[];
    expect(rows2.map((r) => r.status)).toEqual(['valid', 'valid', 'invalid', 'valid']);
    // asked again, not answered from the journal
    expect(dns.queries.slice(asked)).toEqual(expect.arrayContaining(['MX a.test', 'MX b.test']));
    const summary2 = JSON.parse(readFileSync(summaryFile, 'utf8'));
    expect(summary2.fromJournal).toBe(0);
    expect(summary2).not.toHaveProperty('outage');

    // and now they are final: a third run answers them from the journal
    const night3 = await runInProcess(args);
    expect(night3.code).toBe(0);
    expect(JSON.parse(readFileSync(summaryFile, 'utf8')).fromJournal).toBe(3);
  }, 60_000);
});
