import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../../support/dns-server.js';
import { runInProcess } from '../../support/run-in-process.js';
import { startSmtpServer, type TestSmtpServer } from '../../support/smtp-server.js';
import { startSocksServer, type TestSocksServer } from '../../support/socks5-server.js';
import { startServe } from '../../serve/spawn.js';
import { waitFor } from '../../support/wait.js';

// Domains of the run: MX host names that the loopback DNS server points at
// the scripted SMTP server's addresses (test/support/smtp-server.ts).
const mx = (host: string) => ({ mx: [{ exchange: host, priority: 10 }] });
const ZONES = {
  'ok.test': mx('mx.ok.test'),
  'mx.ok.test': { a: ['127.0.0.1'] },
  'catchall.test': mx('mx.catchall.test'),
  'mx.catchall.test': { a: ['127.0.0.1'] },
  // implicit MX: an A record and no MX
  'implicit.test': { a: ['127.0.0.1'] },
  'closed.test': mx('mx.closed.test'),
  'mx.closed.test': { a: ['127.0.0.2'] },
  'silent.test': mx('mx.silent.test'),
  'mx.silent.test': { a: ['127.0.0.3'] },
  'blocked.test': mx('mx.blocked.test'),
  'mx.blocked.test': { a: ['127.0.0.4'] },
  // a second MX host that refuses to connect before the good one
  'backup.test': {
    mx: [
      { exchange: 'mx.closed.test', priority: 5 },
      { exchange: 'mx.ok.test', priority: 10 },
    ],
  },
};

let dns: TestDnsServer;
let smtp: TestSmtpServer;
let dir: string;
beforeAll(async () => {
  [dns, smtp] = await Promise.all([startDnsServer({ zones: ZONES }), startSmtpServer()]);
  dir = mkdtempSync(join(tmpdir(), 'mailsift-smtp-'));
});
afterAll(async () => {
  await Promise.all([dns.close(), smtp.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const smtpFlags = () => [
  '--engine',
  'local',
  '--dns-server',
  dns.address,
  '--smtp',
  '--smtp-port',
  String(smtp.port),
  '--smtp-timeout',
  '500',
  '--smtp-retry-delay',
  '0.2',
  '--smtp-helo',
  'checker.example',
  '--smtp-budget',
  '2',
];

describe('validate --engine local --smtp, end to end', () => {
  it('asks the mail servers and writes smtp and catch_all; the honesty rules hold', async () => {
    const input = join(dir, 'list.csv');
    const rows = [
      'ann@ok.test', // accepted
      'unknown-bob@ok.test', // 550 5.1.1
      'full-cy@ok.test', // 552 5.2.2
      'disabled-flo@ok.test', // 550 5.2.1
      'moved-gus@ok.test', // 551 5.1.6
      'grey-di@ok.test', // 451, then 250
      'policy-ed@ok.test', // 554 5.7.1 (the checker is blocked)
      'info@ok.test', // role, accepted
      'x@catchall.test', // catch-all
      'ann@implicit.test', // implicit MX
      'ann@closed.test', // port closed
      'ann@silent.test', // banner never comes
      'ann@blocked.test', // 554 5.7.1 banner
      'ann@backup.test', // first MX refuses to connect
      'ann@OK.test', // a duplicate
      'ann@nxdomain.test', // never dialled
      'ann@mailinator.com', // disposable: never dialled
      'jörg@ok.test', // a non-ASCII local part: asked with SMTPUTF8, which the server announces
    ];
    writeFileSync(input, 'id,email\n' + rows.map((e, i) => `${i},${e}`).join('\n') + '\n');
    const before = smtp.sessions.length;
    const r = await runInProcess(['validate', input, ...smtpFlags()], { timeoutMs: 30_000 });
    expect(r.stderr).not.toMatch(/Error|at .*\.js/);
    expect(r.code).toBe(0);
    const out = parse(r.stdout, { columns: true }) as Record<string, string>[];
    expect(Object.keys(out[0]!).slice(-3)).toEqual(['smtp', 'catch_all', 'error']);
    const by = (email: string) => out.find((o) => o.email === email)!;
    const pick = (email: string) => {
      const o = by(email);
      return [o.status, o.confidence, o.smtp, o.catch_all];
    };
    expect(pick('ann@ok.test')).toEqual(['valid', '0.97', 'true', 'false']);
    expect(pick('unknown-bob@ok.test')).toEqual(['invalid', '0.95', 'false', 'false']);
    expect(pick('full-cy@ok.test')).toEqual(['risky', '0.8', 'false', 'false']);
    // refused for a reason the server gives: disabled (X.2.1), moved (X.1.6)
    expect([by('disabled-flo@ok.test'), by('moved-gus@ok.test')].map((o) => [o.status, o.reason, o.smtp])).toEqual([
      ['invalid', 'mailbox_disabled', 'false'],
      ['invalid', 'mailbox_disabled', 'false'],
    ]);
    expect(by('unknown-bob@ok.test').reason).toBe('mailbox_not_found');
    expect(pick('grey-di@ok.test')).toEqual(['valid', '0.97', 'true', 'false']);
    // a block of the checker is not evidence: the mailbox is unknown, smtp empty
    expect(pick('policy-ed@ok.test')).toEqual(['unknown', '0.3', '', 'false']);
    expect(by('policy-ed@ok.test').reason).toBe('smtp_blocked');
    expect(pick('info@ok.test')).toEqual(['risky', '0.9', 'true', 'false']);
    expect(pick('x@catchall.test')).toEqual(['risky', '0.6', 'true', 'true']);
    expect(pick('ann@implicit.test')).toEqual(['valid', '0.97', 'true', 'false']);
    // the mailbox could not be checked: unknown with the check's reason, never DNS's valid
    expect(pick('ann@closed.test')).toEqual(['unknown', '0.3', '', '']);
    expect(pick('ann@silent.test')).toEqual(['unknown', '0.3', '', '']);
    expect(pick('ann@blocked.test')).toEqual(['unknown', '0.3', '', '']);
    expect(['ann@closed.test', 'ann@silent.test', 'ann@blocked.test'].map((e) => by(e).reason)).toEqual(['smtp_unreachable', 'smtp_timeout', 'smtp_blocked']);
    // a valid row carries no reason
    expect(out.filter((o) => o.status === 'valid').map((o) => o.reason)).toEqual(out.filter((o) => o.status === 'valid').map(() => ''));
    expect(pick('ann@backup.test')).toEqual(['valid', '0.97', 'true', 'false']);
    expect(pick('ann@OK.test')).toEqual(['valid', '0.97', 'true', 'false']);
    expect(pick('ann@nxdomain.test')).toEqual(['invalid', '0.95', '', '']);
    expect(pick('ann@mailinator.com')[2]).toBe('');
    expect(pick('jörg@ok.test')).toEqual(['valid', '0.97', 'true', 'false']);

    const mine = smtp.sessions.slice(before);
    const rcpts = mine.flatMap((s) => s.commands).filter((l) => l.startsWith('RCPT'));
    expect(rcpts.some((l) => /nxdomain|mailinator/i.test(l))).toBe(false);
    expect(mine.flatMap((s) => s.commands)).toContain('MAIL FROM:<> SMTPUTF8');
    expect(mine.flatMap((s) => s.commands).some((l) => /^DATA/i.test(l))).toBe(false);
    // every session that got past the banner ended with QUIT (the dropped one excepted: none here)
    for (const s of mine.filter((s) => s.commands.length > 0)) expect(s.commands.at(-1)).toBe('QUIT');
    expect(mine.every((s) => s.commands.filter((l) => l.startsWith('EHLO')).every((l) => l === 'EHLO checker.example'))).toBe(true);
    // every connection the servers saw, the silent one included, and no more
    expect(r.stderr).toMatch(new RegExp(`mailbox\\s+15 asked · 6 accepted · 4 refused · 1 catch-all · 4 undetermined · ${mine.length} sessions`));
  });

  it('keeps to --smtp-per-host with many domains on one MX host', async () => {
    const domains = Array.from({ length: 10 }, (_, i) => `d${i}.shared.test`);
    for (const d of domains) dns.zones[d] = mx('mx.ok.test');
    const input = join(dir, 'shared.txt');
    writeFileSync(input, domains.flatMap((d) => [`a@${d}`, `b@${d}`]).join('\n') + '\n');
    smtp.maxOpen.set('127.0.0.1', 0);
    const r = await runInProcess(['validate', input, ...smtpFlags(), '--smtp-per-host', '1', '--batch-size', '4', '--summary', join(dir, 's.json')]);
    expect(r.code).toBe(0);
    expect(smtp.maxOpen.get('127.0.0.1')).toBe(1);
    const summary = JSON.parse(readFileSync(join(dir, 's.json'), 'utf8'));
    expect(summary.smtp).toMatchObject({ asked: 20, accepted: 20, refused: 0 });
  });

  it('dead MX hosts first in a list do not switch the check off: their rows are unknown, later rows are checked', async () => {
    const domains = Array.from({ length: 5 }, (_, i) => `c${i}.closed.test`);
    for (const d of domains) dns.zones[d] = mx(`mx${d}`);
    for (const d of domains) dns.zones[`mx${d}`] = { a: ['127.0.0.2'] };
    const input = join(dir, 'closed.txt');
    writeFileSync(input, [...domains.map((d) => `ann@${d}`), 'ann@ok.test', 'unknown-dead@ok.test'].join('\n') + '\n');
    const r = await runInProcess(['validate', input, ...smtpFlags(), '--smtp-concurrency', '1', '--batch-size', '1', '--format', 'json']);
    expect(r.code).toBe(0);
    expect(r.stderr).not.toMatch(/blocked/);
    const out = JSON.parse(r.stdout).results as { status: string; details: Record<string, unknown> }[];
    expect(out.slice(0, 5).map((o) => [o.status, o.details.smtp, o.details.smtpFailure])).toEqual(domains.map(() => ['unknown', undefined, 'unreachable']));
    expect(out.slice(5).map((o) => [o.status, o.details.smtp])).toEqual([
      ['valid', true],
      ['invalid', false],
    ]);
  });

  it('a journal written without --smtp is not reused by a run with it, which asks the mail server and says why; the other way round it is', async () => {
    const journal = join(dir, 'run.journal');
    const first = await runInProcess(['validate', '-', '--engine', 'local', '--dns-server', dns.address, '--journal', journal], {
      stdin: 'unknown-abe@ok.test\n',
    });
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^unknown-abe@ok\.test,valid,/m);
    const rcpts = () => smtp.commands().filter((c) => c === 'RCPT TO:<unknown-abe@ok.test>').length;
    const asked = rcpts();
    const again = await runInProcess(['validate', '-', ...smtpFlags(), '--journal', journal], { stdin: 'unknown-abe@ok.test\n' });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^unknown-abe@ok\.test,invalid,mailbox_not_found,/m);
    expect(again.stderr).toMatch(
      /^mailsift: --journal .*: 1 verdict rests on less than this run asks for \(made with --no-dns, or without --smtp\): asked again$/m,
    );
    expect(rcpts()).toBe(asked + 1);
    const shallower = await runInProcess(['validate', '-', '--engine', 'local', '--dns-server', dns.address, '--journal', journal], {
      stdin: 'unknown-abe@ok.test\n',
    });
    expect(shallower.code).toBe(0);
    expect(shallower.stdout).toBe(again.stdout);
    expect(rcpts()).toBe(asked + 1);
  });

  // --smtp needs the local engine, a bad --smtp-from, --smtp with --no-dns, a malformed proxy URL: test/cli/plan.test.ts
});

describe('check --smtp', () => {
  it('prints the mailbox verdict', async () => {
    const r = await runInProcess(['check', '--json', 'unknown-zed@ok.test', ...smtpFlags()]);
    expect(r.code).toBe(0);
    const v = JSON.parse(r.stdout);
    expect(v).toMatchObject({ status: 'invalid', details: { smtp: false, catchAll: false } });
    const human = await runInProcess(['check', 'ann@catchall.test', ...smtpFlags()]);
    expect(human.stdout).toMatch(/^smtp: yes$/m);
    expect(human.stdout).toMatch(/^catch-all: yes$/m);
    expect(human.stdout).toMatch(/^status: risky$/m);
  });

  it('says why the mailbox check could not tell', async () => {
    const policy = await runInProcess(['check', 'policy-amy@ok.test', ...smtpFlags()]);
    expect(policy.code).toBe(0);
    expect(policy.stdout).toMatch(/^status: unknown$/m);
    expect(policy.stderr).toMatch(/mailbox check undetermined: mx\.ok\.test: 554 5\.7\.1 .*spamhaus/);
    const closed = await runInProcess(['check', 'ann@closed.test', ...smtpFlags()]);
    expect(closed.stderr).toMatch(/mailbox check undetermined: mx\.closed\.test: cannot connect \(ECONNREFUSED\)/);
  });
});

describe('--smtp-proxy (SOCKS5)', () => {
  let socks: TestSocksServer;
  beforeAll(async () => {
    socks = await startSocksServer({ user: 'ann', password: 's3cret-pw' });
  });
  afterAll(async () => {
    await socks.close();
  });

  it('goes through the proxy, credentials from MAILSIFT_SMTP_PROXY', async () => {
    const r = await runInProcess(['check', '--json', 'ann@ok.test', ...smtpFlags()], {
      env: { MAILSIFT_SMTP_PROXY: `socks5://ann:s3cret-pw@127.0.0.1:${socks.port}` },
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).details.smtp).toBe(true);
    expect(socks.connects).toContain(`127.0.0.1:${smtp.port}`);
  });

  it("a wrong password: one clear warning that never shows it, no smtp verdicts, and exit 4 (the run's own means failed)", async () => {
    const r = await runInProcess(['validate', '-', ...smtpFlags(), '--smtp-proxy', `socks5://ann:wrong-pw-42@127.0.0.1:${socks.port}`], {
      stdin: 'ann@ok.test\nbob@catchall.test\n',
    });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/^mailsift: the mailbox check failed: .*2 rows could not be checked/m);
    expect(r.stderr).toMatch(/proxy socks5:\/\/ann:\*\*\*@127\.0\.0\.1:\d+: the SOCKS5 proxy refused the user name or password/);
    expect(r.stderr).toMatch(/put the URL in MAILSIFT_SMTP_PROXY/);
    expect(r.stderr + r.stdout).not.toContain('wrong-pw-42');
    const out = parse(r.stdout, { columns: true }) as Record<string, string>[];
    expect(out.map((o) => [o.status, o.smtp])).toEqual([
      ['unknown', ''],
      ['unknown', ''],
    ]);
    expect(socks.refused).toBeGreaterThan(0);
  });

  it('a proxy that is down: said once, the rows are unknown, exit 4 even with --quiet, and they are not journaled', async () => {
    const journal = join(dir, 'proxy-down.journal');
    const r = await runInProcess(['validate', '-', ...smtpFlags(), '--smtp-proxy', 'socks5://127.0.0.2:1', '--journal', journal], {
      stdin: 'ann@ok.test\nbob@catchall.test\ncy@implicit.test\n',
    });
    expect(r.code).toBe(4);
    const quiet = await runInProcess(['validate', '-', ...smtpFlags(), '--smtp-proxy', 'socks5://127.0.0.2:1', '-q'], { stdin: 'ann@ok.test\n' });
    expect(quiet.code).toBe(4);
    expect(quiet.stderr).toMatch(/^mailsift: the mailbox check failed: .*1 row could not be checked/m);
    // the journal holds no verdict for them: the next run (proxy fixed) asks the mail servers
    const again = await runInProcess(['validate', '-', ...smtpFlags(), '--journal', journal, '--format', 'json'], { stdin: 'ann@ok.test\n' });
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).results[0]).toMatchObject({ status: 'valid', details: { smtp: true } });
    expect(r.stderr.match(/SMTP proxy socks5:\/\/127\.0\.0\.2:1: cannot connect to it \(ECONNREFUSED\); mailbox checks paused/g)).toHaveLength(1);
    const out = parse(r.stdout, { columns: true }) as Record<string, string>[];
    expect(out.map((o) => [o.status, o.smtp])).toEqual([
      ['unknown', ''],
      ['unknown', ''],
      ['unknown', ''],
    ]);
    // three runs of the binary: room for a loaded machine
  }, 90_000);
});

describe('serve --smtp', () => {
  it('answers a bulk request with the mailbox check, and fills rawResponse', async () => {
    const served = await startServe(
      ['--keys-file', keysFile(), '--dns-server', dns.address, '--smtp', '--smtp-port', String(smtp.port), '--smtp-timeout', '500', '--smtp-allow-private'],
      { dns: true },
    );
    try {
      const bulk = await post(served.url, '/api/validate/bulk', { emails: ['ann@ok.test', 'unknown-bob@ok.test', 'x@catchall.test', 'ann@closed.test'] });
      const by = (e: string) => bulk.results.find((r: { email: string }) => r.email === e);
      expect(by('ann@ok.test')).toMatchObject({ status: 'valid', details: { smtp: true, catchAll: false } });
      expect(by('unknown-bob@ok.test')).toMatchObject({ status: 'invalid', details: { smtp: false } });
      expect(by('x@catchall.test')).toMatchObject({ status: 'risky', details: { smtp: true, catchAll: true } });
      expect(by('ann@closed.test')).toMatchObject({ status: 'unknown', isValid: false });
      expect(by('ann@closed.test').details).not.toHaveProperty('smtp');
      const one = await post(served.url, '/api/validate', { email: 'ann@ok.test' });
      expect(one.rawResponse).toMatchObject({ smtp_check: true, deliverable: true, catch_all: false, accept_all: false });
      const closed = await post(served.url, '/api/validate', { email: 'ann@closed.test' });
      expect(closed.rawResponse).not.toHaveProperty('smtp_check');
      expect(closed.rawResponse).not.toHaveProperty('deliverable');
    } finally {
      served.child.kill('SIGTERM');
      await served.exit;
    }
  });

  it('never dials a loopback or private MX unless --smtp-allow-private; says why in rawResponse', async () => {
    const served = await startServe(
      ['--keys-file', keysFile(), '--dns-server', dns.address, '--smtp', '--smtp-port', String(smtp.port), '--smtp-timeout', '500'],
      { dns: true },
    );
    try {
      const before = smtp.sessions.length;
      const one = await post(served.url, '/api/validate', { email: 'unknown-ssrf@ok.test' });
      expect(one).toMatchObject({ status: 'unknown' });
      expect(one.details).not.toHaveProperty('smtp');
      expect(one.rawResponse).toMatchObject({
        smtp_failure: 'unreachable',
        smtp_note: expect.stringMatching(/127\.0\.0\.1 is not a public internet address.*--smtp-allow-private/),
      });
      expect(smtp.sessions.length).toBe(before);
      const ready = await fetch(served.url + '/readyz');
      expect(await ready.json()).toMatchObject({ status: 'ready', smtp: 'ok' });
    } finally {
      served.child.kill('SIGTERM');
      await served.exit;
    }
  });

  it.runIf(process.platform === 'linux')('masks a proxy password given on the command line in the process list', async () => {
    const served = await startServe(
      [
        '--keys-file',
        keysFile(),
        '--dns-server',
        dns.address,
        '--smtp',
        '--smtp-port',
        String(smtp.port),
        '--smtp-proxy',
        'socks5://ann:pw-in-argv-9@127.0.0.1:1',
      ],
      { dns: true },
    );
    try {
      const cmdline = readFileSync(`/proc/${served.child.pid}/cmdline`, 'utf8');
      expect(cmdline).toContain('socks5://ann:***@127.0.0.1:1');
      expect(cmdline).not.toContain('pw-in-argv-9');
      expect(served.stderr()).toMatch(/put the URL in MAILSIFT_SMTP_PROXY/);
      expect(served.stderr()).not.toContain('pw-in-argv-9');
    } finally {
      served.child.kill('SIGTERM');
      await served.exit;
    }
  });

  it('answers within --smtp-deadline as not determined (no client keeps it), and the finished check fills the cache', async () => {
    const served = await startServe(
      [
        '--keys-file',
        keysFile(),
        '--dns-server',
        dns.address,
        '--smtp',
        '--smtp-port',
        String(smtp.port),
        '--smtp-timeout',
        '500',
        '--smtp-deadline',
        '0.3',
        '--smtp-retry-delay',
        '1',
        '--smtp-allow-private',
      ],
      { dns: true },
    );
    try {
      // the check needs the greylisting retry (1 s): an answer without smtp is one given at the deadline,
      // which says nothing of the mailbox yet: not determined, for a temporary reason
      const first = await post(served.url, '/api/validate', { email: 'grey-late@ok.test' });
      expect(first).toMatchObject({
        status: 'unknown',
        rawResponse: { smtp_failure: 'timeout', smtp_note: expect.stringMatching(/--smtp-deadline/) },
        error: { code: 'UNDETERMINED', details: 'smtp_timeout' },
      });
      expect(first.details).not.toHaveProperty('smtp');
      // mailsift's own client, through the API engine: no verdict for the row, nothing cached
      const run = await runInProcess(['validate', '-', '--cache', join(dir, 'deadline.cache'), '-q'], {
        stdin: 'grey-cli@ok.test\n',
        env: { MAILSIFT_BASE_URL: served.url, MAILSIFT_API_KEY: 'test-key-0123456789abcdef' },
      });
      expect(run.code, run.stderr).toBe(4);
      expect(run.stdout).toMatch(/^grey-cli@ok\.test,unknown,.*UNDETERMINED/m);
      expect(readFileSync(join(dir, 'deadline.cache'), 'utf8').split('\n').slice(1).filter(Boolean)).toEqual([]);
      // the check goes on: the server is asked again; the client stores the finding right
      // after the server's 221, as it hangs up, so a connection closed means a finding kept
      const asked = () => smtp.sessions.filter((x) => x.commands.includes('RCPT TO:<grey-late@ok.test>'));
      const over = () => asked().length === 2 && asked()[1]!.commands.at(-1) === 'QUIT' && smtp.open.get(asked()[1]!.local) === 0;
      await waitFor(over, { what: 'the greylisting retry to be asked, answered and hung up', timeoutMs: 5000 });
      const sessions = smtp.sessions.length;
      // ... and filled the cache: the next request gets the full answer without dialling
      const later = await post(served.url, '/api/validate', { email: 'grey-late@ok.test' });
      expect(later).toMatchObject({ status: 'valid', confidence: 0.97, details: { smtp: true } });
      expect(smtp.sessions.length).toBe(sessions);
    } finally {
      served.child.kill('SIGTERM');
      await served.exit;
    }
  });
});

function keysFile(): string {
  const path = join(dir, 'keys.txt');
  writeFileSync(path, 'test-key-0123456789abcdef\n');
  return path;
}

async function post(base: string, path: string, body: unknown) {
  const res = await fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer test-key-0123456789abcdef' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, any>;
}
