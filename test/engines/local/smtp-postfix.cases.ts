import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer, type Zone } from '../../support/dns-server.js';
import { LAB, PROBED_DOMAIN, REPLIES, type LabLog, type LabOptions, type PostfixLab } from '../../support/postfix.js';
import { runInProcess } from '../../support/run-in-process.js';
import { startSocksServer } from '../../support/socks5-server.js';
import { post } from '../../serve/helpers.js';
import { startServe } from '../../serve/spawn.js';

// The mailbox check against real Postfix (Debian's package) and postgrey, on
// loopback addresses only (test/support/postfix.ts), with the loopback DNS
// server pointing each domain's MX records at them. Nothing leaves the
// machine. Run by test/engines/local/postfix-lab-e2e.test.ts, in the lab it
// starts once for these cases and smtp-lab.cases.ts's, which run at the same
// time at listeners of their own (needs root; skipped with a notice otherwise).

const mxTo = (...hosts: string[]): Zone => ({ mx: hosts.map((exchange, i) => ({ exchange, priority: 10 * (i + 1) })) });

/** mailboxes that exist, per domain; `nobody*` and `gone*` addresses do not */
const LIVE: Record<string, string[]> = {
  'live.test': ['ann', 'bob', 'cy', 'di', 'ed', 'flo', 'gus', 'hal'],
  'limit.test': ['u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7'],
  'conn1.test': ['ann', 'bob'],
  'conn2.test': ['ann', 'bob'],
  'conn3.test': ['ann', 'bob'],
  'grey.test': ['ann', 'bob', 'cy'],
  'slow.test': ['ann', 'bob'],
  'backup.test': ['ann', 'bob'],
};
const DEAD = ['dead1.test', 'dead2.test', 'dead3.test'];

/** mailboxes behind the REPLIES listeners (how replies are read); `nobody*`, `nadié*` do not exist */
const REPLY_LIVE: Record<string, string[]> = {
  'verify.test': ['ann', 'bob'],
  'strict.test': ['ann'],
  'tls.test': ['ann', 'bob'],
  'utf8.test': ['ann', 'josé'],
  'noutf8.test': ['ann', 'josé'],
};

const ZONES: Record<string, Zone> = {
  'mx-plain.lab.test': { a: [LAB.plain] },
  'mx-limit.lab.test': { a: [LAB.limit] },
  'mx-conn.lab.test': { a: [LAB.conn] },
  'mx-grey.lab.test': { a: [LAB.grey] },
  'mx-slow.lab.test': { a: [LAB.tarpit] },
  'mx-dead.lab.test': { a: [LAB.dead] },
  'mx-hold.lab.test': { a: [LAB.hold] },
  'hold.test': mxTo('mx-hold.lab.test'),
  'live.test': mxTo('mx-plain.lab.test'),
  'limit.test': mxTo('mx-limit.lab.test'),
  // one host, three MX lists: three groups of recipients, so sessions to it at once
  'conn1.test': mxTo('mx-conn.lab.test'),
  'conn2.test': mxTo('mx-conn.lab.test', 'mx-dead.lab.test'),
  'conn3.test': mxTo('mx-conn.lab.test', 'mx-plain.lab.test'),
  'grey.test': mxTo('mx-grey.lab.test'),
  'slow.test': mxTo('mx-slow.lab.test'),
  // the first MX is dead: RFC 5321 says try the next
  'backup.test': mxTo('mx-dead.lab.test', 'mx-plain.lab.test'),
  ...Object.fromEntries(DEAD.map((d) => [d, mxTo('mx-dead.lab.test')])),
  'mx-verify.lab.test': { a: [REPLIES.verifySender] },
  'mx-strict.lab.test': { a: [REPLIES.strictSender] },
  'mx-tls.lab.test': { a: [REPLIES.tls] },
  'mx-utf8.lab.test': { a: [REPLIES.utf8] },
  'mx-noutf8.lab.test': { a: [REPLIES.noUtf8] },
  'verify.test': mxTo('mx-verify.lab.test'),
  'strict.test': mxTo('mx-strict.lab.test'),
  'tls.test': mxTo('mx-tls.lab.test'),
  'utf8.test': mxTo('mx-utf8.lab.test'),
  'noutf8.test': mxTo('mx-noutf8.lab.test'),
};

/**
 * Every address of a host, one server behind several names, an anti-harvest
 * limit: mailboxes per domain (`nobody*` do not exist) and their zones.
 */
const SERVERS_LIVE: Record<string, string[]> = {
  // one MX host with two A records, the first dead
  'multi.test': ['ann', 'bob'],
  // three names of the server at LAB.conn2 (2 sessions at once): an MX, a CNAME to it, a mail. name
  'names1.test': ['ann', 'bob', 'cy'],
  'names2.test': ['ann', 'bob', 'cy'],
  'names3.test': ['ann', 'bob', 'cy'],
  // smtpd_hard_error_limit = 3
  'harvest.test': Array.from({ length: 10 }, (_, i) => `u${i}`),
};
const SERVERS_ZONES: Record<string, Zone> = {
  'mx-multi.lab.test': { a: [LAB.dead, LAB.second] },
  'multi.test': mxTo('mx-multi.lab.test'),
  'mx-names.lab.test': { a: [LAB.conn2] },
  'alias-names.lab.test': { cname: 'mx-names.lab.test' },
  'mail.names3.test': { a: [LAB.conn2] },
  'names1.test': mxTo('mx-names.lab.test'),
  'names2.test': mxTo('alias-names.lab.test'),
  'names3.test': mxTo('mail.names3.test'),
  'mx-errors.lab.test': { a: [LAB.errors] },
  'harvest.test': mxTo('mx-errors.lab.test'),
};

/** what these cases need of the lab (test/support/postfix.ts labFor: the lab they share) */
export const POSTFIX_CASES_LAB: LabOptions = {
  // hold.test's host is a proxy to the plain one: kept out of the dirty list, whose sessions are counted per host
  mailboxes: [
    ...[LIVE, REPLY_LIVE, SERVERS_LIVE].flatMap((live) => Object.entries(live).flatMap(([d, locals]) => locals.map((l) => `${l}@${d}`))),
    'ann@hold.test',
  ],
  greyDelaySeconds: 2,
  greetWaitSeconds: 3,
  holdSeconds: 3,
};

/**
 * Declares these cases, in the lab `started()` gives, one after another; they
 * read its log from their own start on (`fromNow`: not the readiness probes'
 * sessions). smtp-lab.cases.ts's run beside them, at listeners of their own.
 */
export function postfixCases(started: () => PostfixLab): void {
  let lab: LabLog;
  let dns: TestDnsServer;
  let dir: string;

  describe.sequential('the mailbox check against real Postfix and postgrey', () => {
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'mailsift-postfix-run-'));
      [lab, dns] = await Promise.all([started().fromNow(), startDnsServer({ zones: { ...ZONES, ...SERVERS_ZONES } })]);
    }, 60_000);
    afterAll(async () => {
      await dns?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    }, 60_000);

    const flags = (...more: string[]) => [
      '--engine',
      'local',
      '--dns-server',
      dns.address,
      '--smtp',
      '--smtp-port',
      '25',
      '--smtp-helo',
      'checker.lab.test',
      '--smtp-timeout',
      '1500',
      '--smtp-retry-delay',
      '3',
      '--format',
      'json',
      '-q',
      ...more,
    ];

    it('a dirty list: dead MX hosts, greylisting, recipient and connection limits, a tarpit — every answer right, no live mailbox invalid, at most 2 sessions per host', async () => {
      const rows: { email: string; expect: boolean | undefined }[] = [];
      for (const [domain, locals] of Object.entries(LIVE)) {
        for (const l of locals) rows.push({ email: `${l}@${domain}`, expect: true });
        rows.push({ email: `nobody@${domain}`, expect: false });
        if (locals.length > 4) rows.push({ email: `gone.${locals.length}@${domain}`, expect: false });
      }
      for (const d of DEAD) rows.push({ email: `ann@${d}`, expect: undefined }, { email: `bob@${d}`, expect: undefined });
      // dead domains first, as in a list sorted by signup date
      rows.sort((a, b) => Number(a.expect !== undefined) - Number(b.expect !== undefined));
      const input = join(dir, 'dirty.txt');
      writeFileSync(input, rows.map((r) => r.email).join('\n') + '\n');

      const started = Date.now();
      const r = await runInProcess(['validate', input, ...flags('--smtp-budget', '20', '--summary', join(dir, 'summary.json'))], { timeoutMs: 90_000 });
      const seconds = (Date.now() - started) / 1000;
      expect(r.stderr).not.toMatch(/blocked|Error|at .*\.js/);
      expect(r.code).toBe(0);
      const results = JSON.parse(r.stdout).results as { email: string; status: string; reason: string; details: { smtp?: boolean; smtpFailure?: string } }[];
      const wrong = results
        .filter((res, i) => res.details.smtp !== rows[i]!.expect)
        .map((res) => `${res.email}: smtp ${res.details.smtp} (${res.details.smtpFailure ?? ''})`);
      // every row a server answers is right (the done-when asks >= 98%); dead domains are left empty, never invalid
      expect(wrong, lab.log().slice(-4000)).toEqual([]);
      for (const [i, res] of results.entries()) {
        if (rows[i]!.expect === true) expect(res.status).toBe('valid');
        // a dead MX: the mailbox could not be checked, so the row is unknown (issue 31), never valid nor invalid
        if (rows[i]!.expect === undefined) expect([res.status, res.reason, res.details.smtpFailure]).toEqual(['unknown', 'smtp_unreachable', 'unreachable']);
      }
      const log = lab.log();
      // what the servers did: postgrey deferred, anvil refused a second connection, postscreen held the greeting
      // (each on its host's lines: the cases run beside these ask the same domains at listeners of their own)
      expect(log).toMatch(/127\.0\.20\.4\/smtpd\[\d+\]: NOQUEUE: reject: RCPT from .*: 450 4\.2\.0 <ann@grey\.test>: Recipient address rejected: Greylisted/);
      expect(log).toMatch(/Connection concurrency limit exceeded: 2 from unknown\[127\.0\.0\.1\] for service 127\.0\.20\.3:25/);
      expect(log).toMatch(/127\.0\.20\.5\/postscreen\[\d+\]: PASS NEW \[127\.0\.0\.1\]/);
      // the recipient limit (3): smaller transactions, in one session
      expect(log).toMatch(/127\.0\.20\.2\/smtpd\[\d+\]: disconnect from .* mail=[3-9]/);
      const sessions = lab.sessions();
      for (const [host, s] of sessions) expect(s.maxOpen, host).toBeLessThanOrEqual(2);
      // greylisting needed its second session; the others were one or two
      expect(sessions.get(LAB.grey)?.total).toBeGreaterThanOrEqual(2);
      // bounded by the budgets: the tarpit's banner, the greylisting delay, and a little
      expect(seconds).toBeLessThan(60);
    }, 120_000);

    it('a tarpit slower than the budget: its rows are smtp_timeout, the run ends at the budget', async () => {
      const r = await runInProcess(['validate', '-', ...flags('--smtp-budget', '1', '--smtp-timeout', '500')], {
        stdin: 'ann@hold.test\nzed@hold.test\n',
        timeoutMs: 30_000,
      });
      expect(r.code).toBe(0);
      const results = JSON.parse(r.stdout).results as { status: string; reason: string; details: { smtp?: boolean; smtpFailure?: string } }[];
      for (const res of results)
        expect([res.status, res.reason, res.details.smtp, res.details.smtpFailure]).toEqual(['unknown', 'smtp_timeout', undefined, 'timeout']);
    }, 60_000);

    /** Runs `validate` on `domains`' mailboxes and a `nobody` each; returns each row's status, by address. */
    async function statuses(name: string, rows: string[]): Promise<Map<string, string>> {
      const input = join(dir, `${name}.txt`);
      writeFileSync(input, rows.join('\n') + '\n');
      const r = await runInProcess(['validate', input, ...flags('--smtp-budget', '20')], { timeoutMs: 60_000 });
      expect(r.stderr).not.toMatch(/blocked|Error|at .*\.js/);
      expect(r.code).toBe(0);
      const results = JSON.parse(r.stdout).results as { email: string; status: string; details: { smtpFailure?: string } }[];
      return new Map(results.map((res) => [res.email, `${res.status}${res.details.smtpFailure ? ` (${res.details.smtpFailure})` : ''}`]));
    }
    const rowsOf = (...domains: string[]) => domains.flatMap((d) => [...SERVERS_LIVE[d]!.map((l) => `${l}@${d}`), `nobody@${d}`]);
    const expected = (rows: string[]) => new Map(rows.map((e) => [e, e.startsWith('nobody') ? 'invalid' : 'valid']));

    it('an MX host whose first address is dead is checked at its second', async () => {
      const rows = rowsOf('multi.test');
      expect(await statuses('multi', rows)).toEqual(expected(rows));
      expect(lab.sessions().get(LAB.second)?.total).toBeGreaterThanOrEqual(1);
    }, 60_000);

    it('three names of one server address (MX, CNAME, mail.): never more than 2 sessions open to it, no 421 too many connections', async () => {
      const rows = rowsOf('names1.test', 'names2.test', 'names3.test');
      expect(await statuses('names', rows)).toEqual(expected(rows));
      const log = lab.log();
      expect(log).not.toMatch(/Connection concurrency limit exceeded: \d+ from \S+ for service 127\.0\.20\.21:25/);
      expect(lab.sessions().get(LAB.conn2)?.maxOpen, log.slice(-3000)).toBeLessThanOrEqual(2);
    }, 60_000);

    it('smtpd_hard_error_limit = 3 drops the session: new sessions ask the rest, every row is right, the limit is hit once', async () => {
      const rows = rowsOf('harvest.test');
      // the dead ones among the live, as a list has them
      for (let i = 1; i < 6; i++) rows.splice(i * 2, 0, `nobody${i}@harvest.test`);
      const got = await statuses('harvest', rows);
      expect(got).toEqual(expected(rows));
      const log = lab.log();
      // the first session met the limit; the ones after it stopped short of it
      expect(log.match(/127\.0\.20\.20\/smtpd\[\d+\]: too many errors after RCPT/g), log.slice(-3000)).toHaveLength(1);
      expect(lab.sessions().get(LAB.errors)?.total).toBeGreaterThan(2);
      expect(lab.sessions().get(LAB.errors)?.maxOpen).toBeLessThanOrEqual(2);
    }, 60_000);

    describe('how replies are read: the sender, STARTTLS, SMTPUTF8', () => {
      type Row = { email: string; status: string; reason: string; details: { smtp?: boolean; catchAll?: boolean; smtpFailure?: string } };
      const validate = async (emails: string[], ...more: string[]) => {
        const r = await runInProcess(['validate', '-', ...flags('--smtp-timeout', '5000', ...more)], { stdin: emails.join('\n') + '\n', timeoutMs: 60_000 });
        expect(r.stderr).not.toMatch(/at .*\.js/);
        expect(r.code, r.stderr).toBe(0);
        const rows = JSON.parse(r.stdout).results as Row[];
        return new Map(rows.map((row) => [row.email, [row.status, row.reason, row.details.smtp, row.details.smtpFailure ?? '']]));
      };

      it('a server that verifies the sender (reject_unverified_sender, 550): asked again with <>, live mailboxes valid, none called invalid; <> refused too: unknown', async () => {
        const by = await validate(
          ['ann@verify.test', 'bob@verify.test', 'nobody@verify.test', 'ann@strict.test', 'zed@strict.test'],
          '--smtp-from',
          `verify@${PROBED_DOMAIN}`,
        );
        expect(by.get('ann@verify.test')).toEqual(['valid', '', true, '']);
        expect(by.get('bob@verify.test')).toEqual(['valid', '', true, '']);
        expect(by.get('nobody@verify.test')).toEqual(['invalid', 'mailbox_not_found', false, '']);
        expect(by.get('ann@strict.test')).toEqual(['unknown', 'smtp_sender_refused', undefined, 'sender-refused']);
        expect(by.get('zed@strict.test')).toEqual(['unknown', 'smtp_sender_refused', undefined, 'sender-refused']);
        // what the servers did: refused the sender, quoting the probe of its domain; refused <> on the strict one
        const log = lab.log();
        expect(log).toMatch(
          new RegExp(
            `${REPLIES.verifySender.replace(/\./g, '\\.')}/smtpd\\[\\d+\\]: NOQUEUE: reject: RCPT from .*: 550 5\\.1\\.7 <verify@sender\\.lab\\.test>: Sender address rejected: undeliverable address: host ${REPLIES.probed.replace(/\./g, '\\.')}\\[.*said: 550 5\\.1\\.1`,
          ),
        );
        expect(log).toMatch(
          new RegExp(
            `${REPLIES.strictSender.replace(/\./g, '\\.')}/smtpd\\[\\d+\\]: NOQUEUE: reject: RCPT from .*: 554 5\\.7\\.1 <>: Sender address rejected: null sender not accepted here`,
          ),
        );
      }, 90_000);

      it('STARTTLS: a server that requires it answers per mailbox; --smtp-tls require leaves a server without it unasked; through a SOCKS5 proxy too', async () => {
        const by = await validate(['ann@tls.test', 'nobody@tls.test']);
        expect(by.get('ann@tls.test')).toEqual(['valid', '', true, '']);
        expect(by.get('nobody@tls.test')).toEqual(['invalid', 'mailbox_not_found', false, '']);
        expect(lab.log()).toMatch(new RegExp(`${REPLIES.tls.replace(/\./g, '\\.')}/smtpd\\[\\d+\\]: Anonymous TLS connection established from`));
        const required = await validate(['ann@tls.test', 'ann@utf8.test'], '--smtp-tls', 'require');
        expect(required.get('ann@tls.test')).toEqual(['valid', '', true, '']);
        expect(required.get('ann@utf8.test')).toEqual(['unknown', 'smtp_unreachable', undefined, 'unreachable']);
        const socks = await startSocksServer();
        try {
          const proxied = await validate(['bob@tls.test', 'nobody2@tls.test'], '--smtp-tls', 'require', '--smtp-proxy', `socks5://127.0.0.1:${socks.port}`);
          expect(proxied.get('bob@tls.test')).toEqual(['valid', '', true, '']);
          expect(proxied.get('nobody2@tls.test')).toEqual(['invalid', 'mailbox_not_found', false, '']);
          expect(socks.connects).toContain(`${REPLIES.tls}:25`);
        } finally {
          await socks.close();
        }
      }, 120_000);

      it('SMTPUTF8: a non-ASCII local part is asked where the server announces it, and unknown where it does not — never valid from DNS alone', async () => {
        const by = await validate(['josé@utf8.test', 'nadié@utf8.test', 'josé@noutf8.test', 'ann@noutf8.test']);
        expect(by.get('josé@utf8.test')).toEqual(['valid', '', true, '']);
        expect(by.get('nadié@utf8.test')).toEqual(['invalid', 'mailbox_not_found', false, '']);
        expect(by.get('josé@noutf8.test')).toEqual(['unknown', 'smtp_no_utf8', undefined, 'no-utf8']);
        expect(by.get('ann@noutf8.test')).toEqual(['valid', '', true, '']);
      }, 90_000);

      it("serve --smtp: the same for a non-ASCII local part (its SMTP path does not keep DNS's valid)", async () => {
        const keys = join(dir, 'keys');
        writeFileSync(keys, 'msk_lab_key\n');
        const served = await startServe(
          [
            '--keys-file',
            keys,
            '--dns-server',
            dns.address,
            '--smtp',
            '--smtp-port',
            '25',
            '--smtp-helo',
            'checker.lab.test',
            '--smtp-timeout',
            '5000',
            '--smtp-allow-private',
          ],
          { dns: true },
        );
        try {
          const ask = async (email: string) => (await post(served.url, '/api/validate', { email }, { key: 'msk_lab_key' })).json;
          expect(await ask('josé@noutf8.test')).toMatchObject({ status: 'unknown', rawResponse: { smtp_failure: 'no-utf8' } });
          expect(await ask('nadié@utf8.test')).toMatchObject({ status: 'invalid', details: { smtp: false } });
          expect(await ask('josé@utf8.test')).toMatchObject({ status: 'valid', details: { smtp: true } });
        } finally {
          served.child.kill('SIGTERM');
          await served.exit;
        }
      }, 90_000);
    });
  });
}
