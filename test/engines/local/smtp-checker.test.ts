import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SmtpChecker, type SmtpCheckOptions } from '../../../src/engines/local/smtp/checker.js';
import { MemorySessionBudget } from '../../../src/engines/local/smtp/stores.js';
import { startSmtpServer, type TestSmtpServer } from '../../support/smtp-server.js';
import { createServer, type AddressInfo } from 'node:net';

/** MX host names → loopback addresses (see test/support/smtp-server.ts) */
const HOSTS: Record<string, string[]> = {
  'mx1.test': ['127.0.0.1'],
  'mx2.test': ['127.0.0.1'],
  'closed.test': ['127.0.0.2'],
  'silent.test': ['127.0.0.3'],
  'blocked.test': ['127.0.0.4'],
};

let server: TestSmtpServer;
beforeAll(async () => {
  server = await startSmtpServer();
});
afterAll(async () => {
  await server.close();
});

function checker(over: Partial<SmtpCheckOptions> = {}) {
  const warnings: string[] = [];
  const c = new SmtpChecker({
    helo: 'checker.test',
    from: '',
    port: server.port,
    timeoutMs: 400,
    concurrency: 8,
    perHost: 2,
    retryDelayMs: 50,
    resolveHost: async (h) => HOSTS[h] ?? [],
    onWarning: (w) => warnings.push(w),
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
    const perTransaction = s!.commands.join('\n').split(/\nRSET\n/).map((t) => t.split('\n').filter((l) => l.startsWith('RCPT')).length);
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
    const found = await c.checkDomain({ domain: 'grey.test', hosts: ['mx1.test'], emails: ['grey-ann@grey.test', 'bob@grey.test'] });
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
    const banner = await c.checkDomain({ domain: 'b.test', hosts: ['blocked.test'], emails: ['ann@b.test'] });
    expect(banner.get('ann@b.test')).toBeUndefined();
    const silent = await c.checkDomain({ domain: 's.test', hosts: ['silent.test'], emails: ['ann@s.test'] });
    expect(silent.get('ann@s.test')).toBeUndefined();
    const drop = await c.checkDomain({ domain: 'd.test', hosts: ['mx1.test'], emails: ['ann@d.test', 'drop-bob@d.test', 'cy@d.test'] });
    expect(drop.get('ann@d.test')?.mailbox).toBe('accepted');
    expect(drop.get('drop-bob@d.test')?.mailbox).toBeUndefined();
    expect(drop.get('cy@d.test')?.mailbox).toBeUndefined();
    const hang = await c.checkDomain({ domain: 'h.test', hosts: ['mx1.test'], emails: ['ann@h.test', 'hang-bob@h.test'] });
    expect(hang.get('ann@h.test')?.mailbox).toBe('accepted');
    expect(hang.get('hang-bob@h.test')?.mailbox).toBeUndefined();
    const closing = await c.checkDomain({ domain: 'c.test', hosts: ['mx1.test'], emails: ['closing-ann@c.test'] });
    expect(closing.get('closing-ann@c.test')?.mailbox).toBeUndefined();
    expect(c.stats.refused).toBe(0);
  });

  it('tries the next MX host when the first refuses to connect', async () => {
    const { c } = checker();
    const found = await c.checkDomain({ domain: 'two.test', hosts: ['closed.test', 'mx1.test'], emails: ['ann@two.test'] });
    expect(found.get('ann@two.test')?.mailbox).toBe('accepted');
  });

  it('says once that outbound SMTP looks blocked, and stops dialling', async () => {
    const { c, warnings } = checker();
    const jobs = ['a', 'b', 'c', 'd'].map((d) => ({ domain: `${d}.test`, hosts: ['closed.test'], emails: [`ann@${d}.test`] }));
    for (const job of jobs.slice(0, 3)) await c.checkDomain(job);
    expect(warnings.filter((w) => /outbound SMTP looks blocked/.test(w))).toHaveLength(1);
    expect(warnings[0]).toMatch(/--smtp-proxy/);
    const before = server.sessions.length;
    const last = await c.checkDomain({ domain: 'e.test', hosts: ['mx1.test'], emails: ['ann@e.test'] });
    expect(last.get('ann@e.test')).toBeUndefined();
    expect(server.sessions.length).toBe(before);
  });

  it('puts domains with the same MX hosts in one session, a catch-all probe each', async () => {
    const { c } = checker();
    const before = server.sessions.length;
    const jobs = ['h1', 'h2', 'h3'].map((d) => ({ domain: `${d}.hosted.test`, hosts: ['mx1.test', 'mx2.test'], emails: [`ann@${d}.hosted.test`, `unknown-bo@${d}.hosted.test`] }));
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
    const jobs = Array.from({ length: 12 }, (_, i) => ({ domain: `d${i}.shared.test`, hosts: ['mx2.test'], emails: [`a@d${i}.shared.test`, `b@d${i}.shared.test`] }));
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
      onSession: () => {
        opened++;
        return (outcome) => ended.push(outcome);
      },
    });
    await c.checkDomain({ domain: 'one.test', hosts: ['mx1.test'], emails: ['ann@one.test'] });
    await c.checkDomain({ domain: 'two.test', hosts: ['blocked.test'], emails: ['ann@two.test'] });
    await c.checkDomain({ domain: 'three.test', hosts: ['mx1.test'], emails: ['hang-ann@three.test'] });
    await c.checkDomain({ domain: 'four.test', hosts: ['closed.test'], emails: ['ann@four.test'] });
    await c.checkDomain({ domain: 'five.test', hosts: ['mx1.test'], emails: ['closing-ann@five.test'] });
    // closing: 421 defers, asked again once after the delay (a second session)
    expect(ended).toEqual(['completed', 'blocked', 'failed', 'deferred', 'deferred']);
    expect(opened).toBe(5);
    expect(c.stats.sessions).toBe(5);
  });
});

describe('cached findings', () => {
  it('are reused for their TTL, not renewed by being reused: once it is over the server is asked again', async () => {
    const { MemorySmtpCache } = await import('../../../src/engines/local/smtp/stores.js');
    let t = 1_000_000;
    const cache = new MemorySmtpCache({ now: () => t });
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
