import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SmtpChecker, type SmtpCheckOptions } from '../../../src/engines/local/smtp/checker.js';
import { MemorySessionBudget } from '../../../src/engines/local/smtp/stores.js';
import { startSmtpServer, type TestSmtpServer } from '../../support/smtp-server.js';
import { createServer, type AddressInfo } from 'node:net';
import { clockReading, FakeClock } from '../../support/fake-clock.js';
import { waitFor } from '../../support/wait.js';
import { systemClock, type Clock } from '../../../src/time/clock.js';
import { sleep } from '../../../src/time/waits.js';

/** MX host names → loopback addresses (see test/support/smtp-server.ts) */
const HOSTS: Record<string, string[]> = {
  'mx1.test': ['127.0.0.1'],
  'mx2.test': ['127.0.0.1'],
  'closed.test': ['127.0.0.2'],
  'silent.test': ['127.0.0.3'],
  'blocked.test': ['127.0.0.4'],
};

/**
 * The check's time, and the scripted server's delays (a tarpit's banner): the
 * tests move it, so that no test waits for a timeout or a delay, and no reply
 * that is merely slow on a loaded machine turns into a timeout.
 */
const clock = new FakeClock();

/** Moves `c` by `ms` once a timer is set for exactly then (a wait the check has come to), firing nothing the check has not reached. */
async function advanceWhen(c: FakeClock, ms: number, what: string): Promise<void> {
  let seen: number[] = [];
  await waitFor(() => ((seen = c.dueTimes), c.dueIn(ms)), { what }).catch((err: Error) => {
    throw new Error(`${err.message} (timers due in ${seen.join(', ')} ms)`);
  });
  await c.advance(ms);
}

/** A server's 421: the check asks again after the retry delay (50 ms here), and waits out the rest of the server's 2 s pause. */
async function waitOutA421(): Promise<void> {
  await advanceWhen(clock, 50, 'the retry delay after a 421');
  await advanceWhen(clock, 1_950, 'the rest of the pause of a server that said 421');
}

let server: TestSmtpServer;
beforeAll(async () => {
  server = await startSmtpServer({ clock });
});
afterAll(async () => {
  await server.close();
});

/** for the checks whose timeout is the point (a silent banner, a reply that never comes, a filtered port) */
const SHORT = { timeoutMs: 400, bannerTimeoutMs: 400 };

function checker(over: Partial<SmtpCheckOptions> = {}) {
  const warnings: string[] = [];
  const c = new SmtpChecker({
    helo: 'checker.test',
    from: '',
    port: server.port,
    // the tests of timeouts pass SHORT, and move the clock past it
    timeoutMs: 3000,
    bannerTimeoutMs: 3000,
    concurrency: 8,
    perHost: 2,
    retryDelayMs: 50,
    resolveHost: async (h) => HOSTS[h] ?? [],
    onWarning: (w) => warnings.push(w),
    clock,
    ...over,
  });
  return { c, warnings };
}

describe('the SMTP check against a real server on loopback', () => {
  it('reads accepted, unknown and full mailboxes in one session, never sends DATA, and QUITs', async () => {
    const { c } = checker();
    const before = server.sessions.length;
    const found = await c.checkDomain({
      domain: 'one.test',
      hosts: ['mx1.test'],
      emails: ['ann@one.test', 'unknown-bob@one.test', 'full-cy@one.test', 'full4-di@one.test'],
    });
    expect(found.get('ann@one.test')).toEqual({ mailbox: 'accepted', catchAll: false });
    expect(found.get('unknown-bob@one.test')).toEqual({ mailbox: 'refused', catchAll: false });
    expect(found.get('full-cy@one.test')).toEqual({ mailbox: 'full', catchAll: false });
    expect(found.get('full4-di@one.test')).toEqual({ mailbox: 'full', catchAll: false });
    const mine = server.sessions.slice(before);
    expect(mine).toHaveLength(1);
    const verbs = mine[0]!.commands.map((l) => l.split(/[ :]/)[0]);
    expect(verbs).toEqual(['EHLO', 'MAIL', 'RCPT', 'RCPT', 'RCPT', 'RCPT', 'RCPT', 'QUIT']);
    expect(mine[0]!.commands[1]).toBe('MAIL FROM:<>');
    expect(server.commands().some((l) => /^DATA/i.test(l))).toBe(false);
    expect(c.stats).toMatchObject({ asked: 4, accepted: 1, refused: 3, catchAll: 0, undetermined: 0, sessions: 1 });
  });

  it('finds a catch-all domain with one random local part, and remembers it', async () => {
    const { c } = checker();
    const before = server.sessions.length;
    const found = await c.checkDomain({ domain: 'catchall.test', hosts: ['mx1.test'], emails: ['anyone@catchall.test'] });
    expect(found.get('anyone@catchall.test')).toEqual({ mailbox: 'accepted', catchAll: true });
    const again = await c.checkDomain({ domain: 'catchall.test', hosts: ['mx1.test'], emails: ['other@catchall.test'] });
    expect(again.get('other@catchall.test')).toEqual({ mailbox: 'accepted', catchAll: true });
    const rcpts = server.sessions.slice(before).flatMap((s) => s.commands.filter((l) => l.startsWith('RCPT')));
    // the probe once, then the two addresses
    expect(rcpts).toHaveLength(3);
    expect(c.stats.catchAll).toBe(2);
  });

  it('carries 250 recipients in transactions of at most 100, RSET between', async () => {
    const { c } = checker();
    const before = server.sessions.length;
    const emails = Array.from({ length: 250 }, (_, i) => `u${i}@many.test`);
    const found = await c.checkDomain({ domain: 'many.test', hosts: ['mx1.test'], emails });
    expect([...found.values()].every((f) => f.mailbox === 'accepted')).toBe(true);
    const [s] = server.sessions.slice(before);
    const perTransaction = s!.commands
      .join('\n')
      .split(/\nRSET\n/)
      .map((t) => t.split('\n').filter((l) => l.startsWith('RCPT')).length);
    expect(perTransaction).toEqual([100, 100, 51]);
  });

  it('asks fewer per transaction after 452 too many recipients', async () => {
    const { c } = checker();
    const before = server.sessions.length;
    const emails = Array.from({ length: 10 }, (_, i) => `u${i}@limit3.test`);
    const found = await c.checkDomain({ domain: 'limit3.test', hosts: ['mx1.test'], emails });
    expect(emails.every((e) => found.get(e)?.mailbox === 'accepted')).toBe(true);
    expect(server.sessions.slice(before)).toHaveLength(1);
  });

  it('asks a greylisting server again once after the delay, in a new session', async () => {
    const { c } = checker();
    const before = server.sessions.length;
    const checking = c.checkDomain({ domain: 'grey.test', hosts: ['mx1.test'], emails: ['grey-ann@grey.test', 'bob@grey.test'] });
    await advanceWhen(clock, 50, 'the check to wait its retry delay');
    const found = await checking;
    expect(found.get('grey-ann@grey.test')?.mailbox).toBe('accepted');
    expect(found.get('bob@grey.test')?.mailbox).toBe('accepted');
    const mine = server.sessions.slice(before);
    expect(mine).toHaveLength(2);
    expect(mine[1]!.commands.filter((l) => l.startsWith('RCPT'))).toEqual(['RCPT TO:<grey-ann@grey.test>']);
  });

  it('never calls an address refused when the checker is blocked, the server closes, a reply or the banner never comes, or the line drops', async () => {
    const { c } = checker();
    const policy = await c.checkDomain({ domain: 'p.test', hosts: ['mx1.test'], emails: ['policy-ann@p.test'] });
    expect(policy.get('policy-ann@p.test')?.mailbox).toBeUndefined();
    expect(policy.get('policy-ann@p.test')?.failure).toBe('blocked');
    const banner = await c.checkDomain({ domain: 'b.test', hosts: ['blocked.test'], emails: ['ann@b.test'] });
    expect(banner.get('ann@b.test')).toMatchObject({ failure: 'blocked', note: expect.stringMatching(/554 5\.7\.1/) });
    expect(banner.get('ann@b.test')?.mailbox).toBeUndefined();
    const short = checker(SHORT).c;
    const silentCheck = short.checkDomain({ domain: 's.test', hosts: ['silent.test'], emails: ['ann@s.test'] });
    // connected, the banner awaited: its timeout is what is left
    await waitFor(() => short.stats.sessions === 1, { what: 'the connection to the silent server' });
    await clock.advance(SHORT.bannerTimeoutMs);
    const silent = await silentCheck;
    expect(silent.get('ann@s.test')).toMatchObject({ failure: 'timeout' });
    expect(silent.get('ann@s.test')?.mailbox).toBeUndefined();
    // the line drops at drop-bob: a new session asks cy, and drop-bob last (dropped again: unreachable)
    const drop = await c.checkDomain({ domain: 'd.test', hosts: ['mx1.test'], emails: ['ann@d.test', 'drop-bob@d.test', 'cy@d.test'] });
    expect(drop.get('ann@d.test')?.mailbox).toBe('accepted');
    expect(drop.get('drop-bob@d.test')).toMatchObject({ failure: 'unreachable' });
    expect(drop.get('drop-bob@d.test')?.mailbox).toBeUndefined();
    expect(drop.get('cy@d.test')?.mailbox).toBe('accepted');
    const hangCheck = short.checkDomain({ domain: 'h.test', hosts: ['mx1.test'], emails: ['ann@h.test', 'hang-bob@h.test'] });
    await waitFor(() => server.commands().includes('RCPT TO:<hang-bob@h.test>'), { what: 'the RCPT whose reply never comes' });
    await clock.advance(SHORT.timeoutMs);
    const hang = await hangCheck;
    expect(hang.get('ann@h.test')?.mailbox).toBe('accepted');
    expect(hang.get('hang-bob@h.test')).toMatchObject({ failure: 'timeout' });
    const closingCheck = c.checkDomain({ domain: 'c.test', hosts: ['mx1.test'], emails: ['closing-ann@c.test'] });
    await waitOutA421();
    const closing = await closingCheck;
    expect(closing.get('closing-ann@c.test')).toMatchObject({ failure: 'greylisted' });
    expect(c.stats.refused).toBe(0);
  });

  it('tries the next MX host when the first refuses to connect', async () => {
    const { c } = checker();
    const found = await c.checkDomain({ domain: 'two.test', hosts: ['closed.test', 'mx1.test'], emails: ['ann@two.test'] });
    expect(found.get('ann@two.test')?.mailbox).toBe('accepted');
  });

  it('puts domains with the same MX hosts in one session, a catch-all probe each', async () => {
    const { c } = checker();
    const before = server.sessions.length;
    const jobs = ['h1', 'h2', 'h3'].map((d) => ({
      domain: `${d}.hosted.test`,
      hosts: ['mx1.test', 'mx2.test'],
      emails: [`ann@${d}.hosted.test`, `unknown-bo@${d}.hosted.test`],
    }));
    jobs.push({ domain: 'catchall.hosted.test', hosts: ['mx1.test', 'mx2.test'], emails: ['zed@catchall.hosted.test'] });
    const found = await c.checkDomains(jobs);
    expect(found.get('ann@h2.hosted.test')).toEqual({ mailbox: 'accepted', catchAll: false });
    expect(found.get('unknown-bo@h3.hosted.test')).toEqual({ mailbox: 'refused', catchAll: false });
    expect(found.get('zed@catchall.hosted.test')).toEqual({ mailbox: 'accepted', catchAll: true });
    const mine = server.sessions.slice(before);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.commands.filter((l) => l.startsWith('RCPT'))).toHaveLength(4 + 7);
  });

  it('keeps to the per-host session limit across domains that share an MX host', async () => {
    const budget = new MemorySessionBudget(2);
    const { c } = checker({ budget, concurrency: 16 });
    const before = new Map(server.maxOpen);
    server.maxOpen.set('127.0.0.1', 0);
    const jobs = Array.from({ length: 12 }, (_, i) => ({
      domain: `d${i}.shared.test`,
      hosts: ['mx2.test'],
      emails: [`a@d${i}.shared.test`, `b@d${i}.shared.test`],
    }));
    const results = await Promise.all(jobs.map((j) => c.checkDomain(j)));
    expect(results.every((r) => [...r.values()].every((f) => f.mailbox === 'accepted'))).toBe(true);
    expect(budget.maxOpen).toBe(2);
    expect(server.maxOpen.get('127.0.0.1')).toBeLessThanOrEqual(2);
    expect(c.stats.sessions).toBe(12);
    void before;
  });

  it('falls back to HELO for an old server, and reads a multi-line banner', async () => {
    // a bare-bones server that knows no EHLO: the dialogue as bytes, not smtp-server
    const seen: string[] = [];
    const old = createServer((sock) => {
      sock.write('220-old.test SMTP\r\n220 no extensions here\r\n');
      let buf = '';
      sock.on('data', (d) => {
        buf += d.toString();
        let nl: number;
        while ((nl = buf.indexOf('\r\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 2);
          seen.push(line);
          const verb = line.split(/[ :]/)[0]!.toUpperCase();
          if (verb === 'EHLO') sock.write('502 5.5.2 Command not implemented\r\n');
          else if (verb === 'QUIT') sock.end('221 bye\r\n');
          else if (/RCPT TO:<nobody@/i.test(line)) sock.write('550 No such user here\r\n');
          else sock.write('250 ok\r\n');
        }
      });
    });
    await new Promise<void>((r) => old.listen(0, '127.0.0.1', r));
    try {
      const { c } = checker({ port: (old.address() as AddressInfo).port });
      const found = await c.checkDomain({ domain: 'old.test', hosts: ['mx1.test'], emails: ['ann@old.test', 'nobody@old.test'] });
      expect(found.get('ann@old.test')?.mailbox).toBe('accepted');
      expect(found.get('nobody@old.test')?.mailbox).toBe('refused');
      expect(seen.map((l) => l.split(/[ :]/)[0])).toEqual(['EHLO', 'HELO', 'MAIL', 'RCPT', 'RCPT', 'RCPT', 'QUIT']);
    } finally {
      await new Promise<void>((r) => old.close(() => r()));
    }
  });
});

describe('onSession (serve --metrics)', () => {
  it('is told of each session that opens, once, with how it ended; not of connections that never opened', async () => {
    const ended: string[] = [];
    let opened = 0;
    const { c } = checker({
      ...SHORT,
      onSession: () => {
        opened++;
        return (outcome) => ended.push(outcome);
      },
    });
    await c.checkDomain({ domain: 'one.test', hosts: ['mx1.test'], emails: ['ann@one.test'] });
    await c.checkDomain({ domain: 'two.test', hosts: ['blocked.test'], emails: ['ann@two.test'] });
    const three = c.checkDomain({ domain: 'three.test', hosts: ['mx1.test'], emails: ['hang-ann@three.test'] });
    await waitFor(() => server.commands().includes('RCPT TO:<hang-ann@three.test>'), { what: 'the RCPT whose reply never comes' });
    await clock.advance(SHORT.timeoutMs);
    await three;
    await c.checkDomain({ domain: 'four.test', hosts: ['closed.test'], emails: ['ann@four.test'] });
    const five = c.checkDomain({ domain: 'five.test', hosts: ['mx1.test'], emails: ['closing-ann@five.test'] });
    await waitOutA421();
    await five;
    // closing: 421 after the probe's answer ends the session; a new one asks the rest at once
    // (421 again, before any answer: deferred), and once more after the delay
    expect(ended).toEqual(['completed', 'blocked', 'failed', 'deferred', 'deferred', 'deferred']);
    expect(opened).toBe(6);
    expect(c.stats.sessions).toBe(6);
  });
});

describe('cached findings', () => {
  it('are reused for their TTL, not renewed by being reused: once it is over the server is asked again', async () => {
    const { MemorySmtpCache } = await import('../../../src/engines/local/smtp/stores.js');
    let t = 1_000_000;
    const cache = new MemorySmtpCache({ clock: clockReading(() => t) });
    const { c } = checker({ cache, cacheTtlMs: 1_000 });
    const rcpts = () => server.commands().filter((l) => /^RCPT TO:<.*@ttl\.test>$/.test(l)).length;
    const job = { domain: 'ttl.test', hosts: ['mx1.test'], emails: ['ann@ttl.test'] };
    await c.checkDomain(job);
    expect(rcpts()).toBe(2); // the catch-all probe and ann
    t += 600;
    expect((await c.checkDomain(job)).get('ann@ttl.test')).toEqual({ mailbox: 'accepted', catchAll: false });
    expect(rcpts()).toBe(2);
    t += 600; // 1,200 ms after the server answered
    expect((await c.checkDomain(job)).get('ann@ttl.test')).toEqual({ mailbox: 'accepted', catchAll: false });
    expect(rcpts()).toBe(4);
  });
});

/**
 * What real mail servers do that the first version of the check got wrong
 * (each case failed before the per-host accounting, the strict reply matching
 * and the budgets).
 */
describe('real-server behaviour', () => {
  it('three dead MX hosts early in a run do not switch the check off: their rows are unreachable, later domains are still asked', async () => {
    const { c, warnings } = checker();
    for (const d of ['a', 'b', 'c']) {
      const dead = await c.checkDomain({ domain: `${d}.dead.test`, hosts: ['closed.test'], emails: [`ann@${d}.dead.test`] });
      expect(dead.get(`ann@${d}.dead.test`)).toMatchObject({ failure: 'unreachable' });
      expect(dead.get(`ann@${d}.dead.test`)?.mailbox).toBeUndefined();
    }
    const live = await c.checkDomain({ domain: 'live.test', hosts: ['mx1.test'], emails: ['ann@live.test', 'unknown-bob@live.test'] });
    expect(live.get('ann@live.test')).toEqual({ mailbox: 'accepted', catchAll: false });
    expect(live.get('unknown-bob@live.test')).toEqual({ mailbox: 'refused', catchAll: false });
    expect(warnings.filter((w) => /blocked/.test(w))).toEqual([]);
    expect(c.state).toBe('ok');
  });

  it('a dead host is remembered: the next domain on it goes straight to its second MX', async () => {
    const { c } = checker();
    await c.checkDomain({ domain: 'one.dead.test', hosts: ['closed.test'], emails: ['ann@one.dead.test'] });
    const found = await c.checkDomain({ domain: 'second.test', hosts: ['closed.test', 'mx1.test'], emails: ['ann@second.test'] });
    expect(found.get('ann@second.test')?.mailbox).toBe('accepted');
  });

  it('judges outbound SMTP blocked only when connections to many hosts of many domains time out, says so once, and tries again later', async () => {
    const { startSocksServer } = await import('../../support/socks5-server.js');
    // a proxy beyond which port 25 is filtered: CONNECTs to 127.0.0.1x never complete
    const socks = await startSocksServer(undefined, { blackhole: (d) => /^127\.0\.0\.1\d:/.test(d) });
    try {
      const filtered = Object.fromEntries(['w', 'x', 'y', 'z'].map((h, i) => [`mx.${h}.test`, [`127.0.0.1${i}`]]));
      // the check's time is the test's: the re-test falls due when the clock says so, not after a sleep
      const clock = new FakeClock();
      const { c, warnings } = checker({
        proxy: { host: '127.0.0.1', port: socks.port, remoteDns: false },
        resolveHost: async (h) => filtered[h] ?? HOSTS[h] ?? [],
        blockRetestMs: 300,
        clock,
        ...SHORT,
      });
      // one refused host first: a refusal is no evidence of a blocked network
      for (const [i, h] of ['w', 'x', 'y', 'z'].entries()) {
        const checking = c.checkDomain({ domain: `${h}.test`, hosts: [`mx.${h}.test`], emails: [`ann@${h}.test`] });
        // the proxy has the CONNECT, and never answers it: the handshake's timeout is what is left
        await waitFor(() => socks.connects.length === i + 1, { what: `the CONNECT to mx.${h}.test` });
        await clock.advance(SHORT.timeoutMs);
        const f = await checking;
        expect(f.get(`ann@${h}.test`)).toMatchObject({ failure: 'timeout' });
      }
      expect(c.state).toBe('blocked');
      expect(warnings.filter((w) => /outbound SMTP looks blocked/.test(w))).toHaveLength(1);
      expect(warnings[0]).toMatch(/4 mail servers of 4 domains timed out.*proxy/);
      // while blocked: not dialled
      const connects = socks.connects.length;
      const meanwhile = await c.checkDomain({ domain: 'm.test', hosts: ['mx1.test'], emails: ['ann@m.test'] });
      expect(meanwhile.get('ann@m.test')).toMatchObject({ failure: 'timeout' });
      expect(socks.connects.length).toBe(connects);
      // not yet due: still not dialled
      await clock.advance(299);
      await c.checkDomain({ domain: 'm2.test', hosts: ['mx1.test'], emails: ['ann@m2.test'] });
      expect(socks.connects.length).toBe(connects);
      // later: tried again, and it works
      await clock.advance(1);
      const later = await c.checkDomain({ domain: 'n.test', hosts: ['mx1.test'], emails: ['ann@n.test'] });
      expect(later.get('ann@n.test')?.mailbox).toBe('accepted');
      expect(c.state).toBe('ok');
      expect(warnings.some((w) => /works again/.test(w))).toBe(true);
    } finally {
      await socks.close();
    }
  });

  it("reads OpenSMTPD's 451 4.5.3 too many recipients as a smaller transaction, not greylisting", async () => {
    const { c } = checker();
    const before = server.sessions.length;
    const emails = Array.from({ length: 7 }, (_, i) => `u${i}@olimit3.test`);
    const found = await c.checkDomain({ domain: 'olimit3.test', hosts: ['mx1.test'], emails });
    expect(emails.map((e) => found.get(e)?.mailbox)).toEqual(emails.map(() => 'accepted'));
    // one session, transactions of at most 3 (the probe counts in the first)
    const mine = server.sessions.slice(before);
    expect(mine).toHaveLength(1);
  });

  it('backs off a host that says too many concurrent connections, and holds it to one session', async () => {
    const { c } = checker({ resolveHost: async (h) => (h === 'busy.test' ? ['127.0.0.5'] : (HOSTS[h] ?? [])), concurrency: 8 });
    server.maxOpen.set('127.0.0.5', 0);
    const jobs = Array.from({ length: 4 }, (_, i) => ({
      domain: `b${i}.busy.test`,
      hosts: ['busy.test'],
      emails: [`ann@b${i}.busy.test`, `unknown-bo@b${i}.busy.test`],
    }));
    const checking = Promise.all(jobs.map((j) => c.checkDomain(j)));
    // the busy server's pause, on the clock
    await waitOutA421();
    const found = await checking;
    for (let i = 0; i < 4; i++) {
      expect(found[i]!.get(`ann@b${i}.busy.test`)?.mailbox).toBe('accepted');
      expect(found[i]!.get(`unknown-bo@b${i}.busy.test`)?.mailbox).toBe('refused');
    }
    // the one 421 (two sessions at once, the per-host default) and never again
    expect(server.busyRefusals).toBe(1);
  });

  it('waits for a slow banner (a tarpit) beyond the per-reply timeout', async () => {
    const { c } = checker({ timeoutMs: 400, bannerTimeoutMs: undefined, resolveHost: async (h) => (h === 'tarpit.test' ? ['127.0.0.6'] : []) });
    const checking = c.checkDomain({ domain: 'tarpit.test', hosts: ['tarpit.test'], emails: ['ann@tarpit.test'] });
    // the banner held 1.5 s, past the 400 ms per reply
    await waitFor(() => c.stats.sessions === 1 && clock.dueIn(1_500), { what: 'the connection to the tarpit' });
    await clock.advance(1_500);
    const found = await checking;
    expect(found.get('ann@tarpit.test')?.mailbox).toBe('accepted');
  });

  it('ends at the host budget: what is left is a timeout, never refused', async () => {
    const { c } = checker({ hostBudgetMs: 300, resolveHost: async (h) => (h === 'tarpit.test' ? ['127.0.0.6'] : []) });
    const checking = c.checkDomain({ domain: 'budget.test', hosts: ['tarpit.test'], emails: ['ann@budget.test', 'bob@budget.test'] });
    // the tarpit holds its banner 1.5 s; the budget ends at 300 ms
    await waitFor(() => c.stats.sessions === 1 && clock.dueIn(1_500), { what: 'the connection to the tarpit' });
    await clock.advance(300);
    const found = await checking;
    for (const e of ['ann@budget.test', 'bob@budget.test']) {
      expect(found.get(e)).toMatchObject({ failure: 'timeout' });
      expect(found.get(e)?.mailbox).toBeUndefined();
    }
    // spent: the next domain on that host is not dialled
    const connections = server.sessions.length;
    const next = await c.checkDomain({ domain: 'budget2.test', hosts: ['tarpit.test'], emails: ['ann@budget2.test'] });
    expect(next.get('ann@budget2.test')).toMatchObject({ failure: 'timeout', note: expect.stringMatching(/--smtp-budget/) });
    expect(server.sessions.length).toBe(connections);
  });

  it('merges identical checks asked at once into one probe', async () => {
    const { c } = checker();
    const before = server.commands().length;
    const found = await Promise.all(Array.from({ length: 50 }, () => c.checkDomain({ domain: 'merge.test', hosts: ['mx1.test'], emails: ['ann@merge.test'] })));
    expect(found.every((f) => f.get('ann@merge.test')?.mailbox === 'accepted')).toBe(true);
    const rcpts = server
      .commands()
      .slice(before)
      .filter((l) => l.startsWith('RCPT'));
    expect(rcpts.filter((l) => l === 'RCPT TO:<ann@merge.test>')).toHaveLength(1);
    expect(rcpts).toHaveLength(2); // and one catch-all probe
  });

  it('keeps at most maxPending checks; past it an address is answered without one, as not determined', async () => {
    const { c } = checker({ maxPending: 2 });
    const found = await c.checkDomain({ domain: 'q.test', hosts: ['mx1.test'], emails: ['a@q.test', 'b@q.test', 'c@q.test'] });
    expect(found.get('a@q.test')?.mailbox).toBe('accepted');
    expect(found.get('c@q.test')).toEqual({ failure: 'timeout', note: expect.stringMatching(/2 addresses pending/) });
    expect(c.pending).toBe(0);
  });

  it('the SSRF guard: no private, loopback or IP-literal MX is dialled; the reason is told', async () => {
    const { c } = checker({ publicOnly: true });
    const before = server.sessions.length;
    const loop = await c.checkDomain({ domain: 'ssrf.test', hosts: ['mx1.test'], emails: ['ann@ssrf.test'] });
    expect(loop.get('ann@ssrf.test')).toMatchObject({ failure: 'unreachable', note: expect.stringMatching(/127\.0\.0\.1 is not a public internet address/) });
    const literal = await c.checkDomain({ domain: 'lit.test', hosts: ['127.0.0.1'], emails: ['ann@lit.test'] });
    expect(literal.get('ann@lit.test')).toMatchObject({ failure: 'unreachable', note: expect.stringMatching(/IP address is not dialled/) });
    expect(server.sessions.length).toBe(before);
  });

  it('a --smtp-retry-delay past 2^31 ms waits, instead of firing at once', async () => {
    const clock = new FakeClock();
    const { c } = checker({ retryDelayMs: 3_000_000_000, clock });
    const asked = () => server.commands().filter((l) => l === 'RCPT TO:<grey-long@long.test>').length;
    const done = c.checkDomain({ domain: 'long.test', hosts: ['mx1.test'], emails: ['grey-long@long.test'] });
    // the first session is over and the retry waits on the clock (real I/O in between)
    await waitFor(() => asked() === 1 && clock.pending === 1, { what: 'the check to come to wait for its retry', timeoutMs: 5000 });
    await clock.advance(2_999_999_999);
    expect(asked()).toBe(1);
    c.close();
    const found = await done;
    expect(found.get('grey-long@long.test')).toMatchObject({ failure: 'greylisted' });
  });

  it('the real clock clamps a wait past 2^31 ms (setTimeout would fire it at once)', () => {
    const spy = vi.spyOn(globalThis, 'setTimeout');
    try {
      const cancel = systemClock.setTimer(() => undefined, 3_000_000_000);
      expect(spy.mock.calls.at(-1)![1]).toBe(2 ** 31 - 1);
      cancel();
    } finally {
      spy.mockRestore();
    }
  });

  it("a caller that gives up while the banner is awaited (serve's client hung up) does not mark the host as failed", async () => {
    const slow = await startSmtpServer({ bannerDelayMs: 300, clock });
    try {
      const { c } = checker({ port: slow.port, resolveHost: async () => ['127.0.0.6'] });
      const gaveUp = new AbortController();
      const first = c.checkDomain({ domain: 'slow.test', hosts: ['mx.slow.test'], emails: ['ann@slow.test'] }, gaveUp.signal);
      await waitFor(() => slow.sessions.length > 0, { what: 'the checker to connect', timeoutMs: 5000 });
      gaveUp.abort(new Error('the client went away'));
      await expect(first).rejects.toThrow('the client went away');
      // the next request for that domain is checked, not told the host "did not answer earlier"
      const checking = c.checkDomain({ domain: 'slow.test', hosts: ['mx.slow.test'], emails: ['ann@slow.test'] });
      await waitFor(() => slow.sessions.length === 2, { what: 'the second connection' });
      await clock.advance(300);
      const next = await checking;
      expect(next.get('ann@slow.test')).toMatchObject({ mailbox: 'accepted' });
      expect(slow.sessions.length).toBe(2);
    } finally {
      await slow.close();
    }
  });

  it('counts every connection that opened as a session, the silent ones too', async () => {
    const { c } = checker(SHORT);
    const before = server.sessions.length;
    await c.checkDomain({ domain: 's1.test', hosts: ['mx1.test'], emails: ['ann@s1.test'] });
    const silent = c.checkDomain({ domain: 's2.test', hosts: ['silent.test'], emails: ['ann@s2.test'] });
    await waitFor(() => server.sessions.length - before === 2, {
      what: `the connection to the silent server (${server.sessions.length - before}, ${c.stats.sessions}, pending ${clock.pending})`,
    });
    await waitFor(() => c.stats.sessions === 2, { what: 'the checker to count it' });
    await clock.advance(SHORT.bannerTimeoutMs);
    await silent;
    expect(c.stats.sessions).toBe(server.sessions.length - before);
  });
});

describe('protocol discipline', () => {
  /** A raw SMTP server that misbehaves as told; RCPT of unknown* gets 550 5.1.1, others 250. */
  async function rawServer(mode: 'double-banner' | 'extra-reply' | 'late-extra'): Promise<{ port: number; close(): Promise<void> }> {
    const srv = createServer((sock) => {
      sock.write(mode === 'double-banner' ? '220 a ESMTP\r\n220 a ESMTP\r\n' : '220 a ESMTP\r\n');
      let buf = '';
      let rcpts = 0;
      // replies leave in order, as a real server's do
      let chain = Promise.resolve();
      const send = (text: string, ms = 0) => {
        chain = chain.then(
          () =>
            new Promise<void>((r) =>
              setTimeout(() => {
                if (!sock.destroyed) sock.write(text);
                r();
              }, ms),
            ),
        );
      };
      sock.on('data', (d) => {
        buf += d.toString();
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          const verb = line.split(/[ :]/)[0]!.toUpperCase();
          if (verb === 'QUIT') {
            send('221 bye\r\n');
            return;
          }
          if (verb === 'RCPT') {
            rcpts++;
            const reply = /RCPT TO:<unknown/i.test(line) ? '550 5.1.1 user unknown\r\n' : '250 ok\r\n';
            // late-extra: a stale 250 first, the real reply a moment later, so every later reply is one behind
            if (mode === 'late-extra' && rcpts === 2) send('250 ok\r\n');
            send(reply, mode === 'late-extra' && rcpts === 2 ? 20 : 0);
            // a reply nobody asked for, after the first RCPT's
            if (mode === 'extra-reply' && rcpts === 1) send('550 5.1.1 user unknown\r\n');
          } else send('250 ok\r\n');
        }
      });
      sock.on('error', () => sock.destroy());
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    return { port: (srv.address() as AddressInfo).port, close: () => new Promise<void>((r) => srv.close(() => r())) };
  }

  for (const mode of ['double-banner', 'extra-reply', 'late-extra'] as const) {
    it(`${mode}: the session is dropped and no mailbox is called dead or alive`, async () => {
      const raw = await rawServer(mode);
      try {
        const { c } = checker({ port: raw.port, resolveHost: async () => ['127.0.0.1'] });
        const emails = ['unknown-a@desync.test', 'ann@desync.test', 'bob@desync.test', 'cy@desync.test'];
        const found = await c.checkDomain({ domain: 'desync.test', hosts: ['mx.desync.test'], emails });
        for (const e of emails) {
          expect(found.get(e)?.mailbox, e).toBeUndefined();
          expect(found.get(e)?.failure, e).toBe('unreachable');
        }
        expect(c.stats.refused).toBe(0);
      } finally {
        await raw.close();
      }
    });
  }
});

/**
 * A raw SMTP server with the limits hosting providers set (`ok*` mailboxes
 * exist, every other local part is unknown), counting as such servers do:
 *   maxConn     sessions at once; one more gets `421 4.7.0 Error: too many
 *               connections` (Postfix's anvil), and is counted while open
 *   errorLimit  Postfix's smtpd_hard_error_limit: after the Nth error reply,
 *               `421 4.7.0 Error: too many errors` unasked, and the connection closed
 *   failLimit   Exim's anti-harvest ACL: once more than N RCPTs failed, the
 *               next RCPT gets `550 Too many failed recipients` and the connection drops
 *   dropAtOnce  closes the connection at the first RCPT, unanswered
 *   rcptDelayMs each RCPT reply held this long
 *   errorSleep  Postfix's smtpd_soft_error_limit/smtpd_error_sleep_time: once
 *               `after` RCPTs failed, every reply waits `ms` (counted in `held`)
 *   sleeps      the delay is a sleep (Postfix's `sleep`, Exim's `delay`): the
 *               server reads nothing meanwhile, so it sees the client leave only
 *               after it, and counts the session until then
 * A session is counted out when the server answers QUIT, as Postfix logs it.
 * On `host` (127.0.0.1); the other loopback addresses on its port refuse.
 */
async function limitServer(
  o: {
    maxConn?: number;
    errorLimit?: number;
    failLimit?: number;
    dropAtOnce?: boolean;
    rcptDelayMs?: number;
    sleeps?: boolean;
    errorSleep?: { after: number; ms: number };
    host?: string;
    /** what the delays and sleeps wait on (the real clock by default) */
    clock?: Clock;
  } = {},
) {
  const stats = { sessions: 0, open: 0, maxOpen: 0, busy: 0, drops: 0, held: 0, rcpts: [] as string[] };
  const srv = createServer({ allowHalfOpen: o.sleeps === true }, (sock) => {
    stats.sessions++;
    stats.maxOpen = Math.max(stats.maxOpen, ++stats.open);
    let counted = true;
    const out = () => {
      if (counted) stats.open--;
      counted = false;
    };
    sock.on('close', out);
    sock.on('error', () => sock.destroy());
    if (o.maxConn !== undefined && stats.open > o.maxConn) {
      stats.busy++;
      // read on, so that the client's close is seen and the session counted out
      sock.resume();
      sock.end('421 4.7.0 lab.test Error: too many connections from 127.0.0.1\r\n');
      return;
    }
    sock.write('220 lab.test ESMTP\r\n');
    let errors = 0;
    let buf = '';
    let chain = Promise.resolve();
    // the client left: noticed once the sleep is over, then the server closes its end too
    if (o.sleeps) sock.on('end', () => void chain.then(() => sock.end()));
    sock.on('data', (d) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\r\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 2);
        chain = chain.then(() => answer(line));
      }
    });
    const answer = async (line: string) => {
      // a connection the server has ended reads no more commands
      if (sock.destroyed || sock.writableEnded) return;
      if (o.errorSleep && errors >= o.errorSleep.after) {
        stats.held++;
        await sleep(o.clock ?? systemClock, o.errorSleep.ms);
      }
      const verb = line.split(/[ :]/)[0]!.toUpperCase();
      if (verb === 'QUIT') {
        out();
        sock.end('221 2.0.0 Bye\r\n');
        return;
      }
      if (verb === 'EHLO') return void sock.write('250-lab.test\r\n250 ENHANCEDSTATUSCODES\r\n');
      if (verb !== 'RCPT') return void sock.write('250 2.0.0 Ok\r\n');
      const rcpt = /<(.*)>/.exec(line)![1]!;
      stats.rcpts.push(rcpt);
      if (o.rcptDelayMs) await sleep(o.clock ?? systemClock, o.rcptDelayMs);
      if (o.dropAtOnce || (o.failLimit !== undefined && errors > o.failLimit)) {
        stats.drops++;
        return void (o.dropAtOnce ? sock.destroy() : sock.end('550 Too many failed recipients\r\n'));
      }
      if (rcpt.startsWith('ok')) return void sock.write('250 2.1.5 Ok\r\n');
      errors++;
      const refusal = `550 5.1.1 <${rcpt}>: Recipient address rejected: User unknown in virtual mailbox table\r\n`;
      if (o.errorLimit !== undefined && errors >= o.errorLimit) {
        stats.drops++;
        sock.end(refusal + '421 4.7.0 lab.test Error: too many errors\r\n');
        return;
      }
      sock.write(refusal);
    };
  });
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(0, o.host ?? '127.0.0.1', resolve);
  });
  return { port: (srv.address() as AddressInfo).port, stats, close: () => new Promise<void>((r) => srv.close(() => r())) };
}

describe('every address of a host, politeness per server, a new session after a drop', () => {
  it('tries each address of an MX host before the next MX; a refused address does not put the host down', async () => {
    const lab = await limitServer();
    try {
      // 127.0.0.2 and .3 refuse on the lab's port: the backup MX, reached, would leave the rows unreachable
      const addresses: Record<string, string[]> = { 'two-a.test': ['127.0.0.2', '127.0.0.1'], 'backup.test': ['127.0.0.3'] };
      const { c } = checker({ port: lab.port, resolveHost: async (h) => addresses[h] ?? [] });
      const found = await c.checkDomain({ domain: 'multi.test', hosts: ['two-a.test', 'backup.test'], emails: ['ok-ann@multi.test', 'bo@multi.test'] });
      expect(found.get('ok-ann@multi.test')).toEqual({ mailbox: 'accepted', catchAll: false });
      expect(found.get('bo@multi.test')).toEqual({ mailbox: 'refused', catchAll: false });
      // the next domain on that host is still checked: only its dead address is skipped
      const next = await c.checkDomain({ domain: 'multi2.test', hosts: ['two-a.test'], emails: ['ok-bob@multi2.test'] });
      expect(next.get('ok-bob@multi2.test')).toEqual({ mailbox: 'accepted', catchAll: false });
    } finally {
      await lab.close();
    }
  });

  it('checks an IPv6-only MX, and goes on to a host’s AAAA when its A is dead', async (ctx) => {
    const lab = await limitServer({ host: '::1' }).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRNOTAVAIL' || err.code === 'EAFNOSUPPORT') return undefined;
      throw err;
    });
    if (!lab) return ctx.skip('no IPv6 loopback here');
    try {
      const addresses: Record<string, string[]> = { 'v6only.test': ['::1'], 'dual.test': ['127.0.0.2', '::1'] };
      const { c } = checker({ port: lab.port, resolveHost: async (h) => addresses[h] ?? [] });
      const v6 = await c.checkDomain({ domain: 'six.test', hosts: ['v6only.test'], emails: ['ok-ann@six.test', 'bo@six.test'] });
      expect(v6.get('ok-ann@six.test')).toEqual({ mailbox: 'accepted', catchAll: false });
      expect(v6.get('bo@six.test')).toEqual({ mailbox: 'refused', catchAll: false });
      const dual = await c.checkDomain({ domain: 'dual.test', hosts: ['dual.test'], emails: ['ok-ann@dual.test'] });
      expect(dual.get('ok-ann@dual.test')).toEqual({ mailbox: 'accepted', catchAll: false });
      expect(lab.stats.sessions).toBe(2);
    } finally {
      await lab.close();
    }
  });

  it('a session we timed out holds its place until the server lets it go: never more than 2 open on its side', async () => {
    // each RCPT reply sleeps 600 ms, past the 200 ms reply timeout: the server is still at work when we leave
    const lab = await limitServer({ rcptDelayMs: 600, sleeps: true });
    try {
      // one server first in three MX lists whose backups differ: three groups, dialled at once
      const addresses: Record<string, string[]> = { 'backup1.test': ['127.0.0.2'], 'backup2.test': ['127.0.0.3'] };
      // on the real clock: the lab's replies sleep in real time, which the check's timeouts race
      const { c } = checker({ port: lab.port, resolveHost: async (h) => addresses[h] ?? ['127.0.0.1'], timeoutMs: 200, clock: systemClock });
      const lists = [['mx.one.test'], ['alias.one.test', 'backup1.test'], ['mail.one.test', 'backup2.test']];
      const jobs = lists.map((hosts, i) => ({ domain: `s${i}.test`, hosts, emails: [`ok-ann@s${i}.test`] }));
      const found = await c.checkDomains(jobs);
      for (const j of jobs) expect(found.get(j.emails[0]!)).toMatchObject({ failure: 'timeout' });
      expect(lab.stats.sessions).toBe(3);
      expect(lab.stats.maxOpen).toBe(2);
    } finally {
      await lab.close();
    }
  });

  it('three names of one server address are one server: one session asks for the three domains', async () => {
    const lab = await limitServer({ maxConn: 2 });
    try {
      const { c } = checker({ port: lab.port, resolveHost: async () => ['127.0.0.1'] });
      // an MX, a CNAME and a mail. name of one machine
      const jobs = ['mx.one.test', 'alias.one.test', 'mail.one.test'].map((host, i) => ({
        domain: `n${i}.test`,
        hosts: [host],
        emails: [`ok-ann@n${i}.test`, `nobody@n${i}.test`],
      }));
      const found = await c.checkDomains(jobs);
      for (const j of jobs) {
        expect(found.get(j.emails[0]!)).toEqual({ mailbox: 'accepted', catchAll: false });
        expect(found.get(j.emails[1]!)).toEqual({ mailbox: 'refused', catchAll: false });
      }
      expect(lab.stats.sessions).toBe(1);
    } finally {
      await lab.close();
    }
  });

  it('one server first in three MX lists shares its session budget: never more than 2 at once, no 421 too many connections', async () => {
    const lab = await limitServer({ maxConn: 2, rcptDelayMs: 25 });
    try {
      // the backups differ (127.0.0.2 and .3 refuse on the lab's port), so the three are three groups, dialled at once
      const addresses: Record<string, string[]> = { 'backup1.test': ['127.0.0.2'], 'backup2.test': ['127.0.0.3'] };
      const { c } = checker({ port: lab.port, resolveHost: async (h) => addresses[h] ?? ['127.0.0.1'] });
      const lists = [['mx.one.test'], ['alias.one.test', 'backup1.test'], ['mail.one.test', 'backup2.test']];
      const jobs = lists.map((hosts, i) => ({
        domain: `d${i}.test`,
        hosts,
        emails: [`ok-ann@d${i}.test`, `ok-bob@d${i}.test`, `nobody@d${i}.test`],
      }));
      const found = await c.checkDomains(jobs);
      for (const j of jobs) {
        expect(found.get(j.emails[0]!)).toEqual({ mailbox: 'accepted', catchAll: false });
        expect(found.get(j.emails[2]!)).toEqual({ mailbox: 'refused', catchAll: false });
      }
      expect(lab.stats.busy).toBe(0);
      expect(lab.stats.maxOpen).toBe(2);
    } finally {
      await lab.close();
    }
  });

  for (const [kind, limits] of [
    ["Postfix's smtpd_hard_error_limit (421 unasked after the 3rd error)", { errorLimit: 3 }],
    ["Exim's drop after too many failed recipients (550, then the line drops)", { failLimit: 3 }],
  ] as const) {
    it(`${kind}: a new session for the rest, every row answered, and the drop point is not hit again`, async () => {
      const lab = await limitServer(limits);
      try {
        // the check's own waits are the test's: none is needed, a reconnect is at once
        const { c } = checker({ port: lab.port, resolveHost: async () => ['127.0.0.1'], clock: new FakeClock() });
        const emails = Array.from({ length: 20 }, (_, i) => (i % 2 ? `nobody${i}@harvest.test` : `ok${i}@harvest.test`));
        const found = await c.checkDomain({ domain: 'harvest.test', hosts: ['mx.harvest.test'], emails });
        for (const e of emails) expect(found.get(e), e).toEqual({ mailbox: e.startsWith('ok') ? 'accepted' : 'refused', catchAll: false });
        expect(c.stats.undetermined).toBe(0);
        // the first session ran into the limit; those after it stopped short of it
        expect(lab.stats.drops).toBe(1);
        expect(lab.stats.sessions).toBeGreaterThan(2);
        // every address asked once (and the catch-all probe); only the one the drop answered, if any, twice
        expect(lab.stats.rcpts.length).toBeLessThanOrEqual(emails.length + 2);
        expect(new Set(lab.stats.rcpts).size).toBe(emails.length + 1);
      } finally {
        await lab.close();
      }
    });
  }

  it("Postfix's error sleep (every reply held once enough recipients failed): a new session instead, and later ones stop short of it", async () => {
    // the lab's sleep and the check share a clock: a reply held 900 ms is 900 ms to the check, moved by the test
    const time = new FakeClock();
    const lab = await limitServer({ errorSleep: { after: 4, ms: 900 }, clock: time });
    try {
      const { c } = checker({ port: lab.port, resolveHost: async () => ['127.0.0.1'], clock: time });
      const emails = Array.from({ length: 24 }, (_, i) => (i % 2 ? `nobody${i}@slow.test` : `ok${i}@slow.test`));
      const checking = c.checkDomain({ domain: 'slow.test', hosts: ['mx.slow.test'], emails });
      // the held reply, then the QUIT of its session
      for (const held of [1, 2]) {
        await waitFor(() => lab.stats.held === held && time.dueIn(900), { what: `the lab to hold reply ${held}` });
        await time.advance(900);
      }
      const found = await checking;
      for (const e of emails) expect(found.get(e), e).toEqual({ mailbox: e.startsWith('ok') ? 'accepted' : 'refused', catchAll: false });
      // one held reply tells (its session's QUIT is held too): the session ends there, and the next ones stop at 3 failed recipients
      expect(lab.stats.held).toBe(2);
      expect(lab.stats.sessions).toBeGreaterThan(2);
      expect(lab.stats.maxOpen).toBeLessThanOrEqual(2);
    } finally {
      await lab.close();
    }
  });

  it('a server that drops every session at once is not dialled over and over: one session, the rows unreachable', async () => {
    const lab = await limitServer({ dropAtOnce: true });
    try {
      const { c } = checker({ port: lab.port, resolveHost: async () => ['127.0.0.1'], clock: new FakeClock() });
      const emails = ['ok1@drop.test', 'ok2@drop.test', 'ok3@drop.test'];
      const found = await c.checkDomain({ domain: 'drop.test', hosts: ['mx.drop.test'], emails });
      for (const e of emails) expect(found.get(e)).toMatchObject({ failure: 'unreachable' });
      expect(lab.stats.sessions).toBe(1);
    } finally {
      await lab.close();
    }
  });
});
