import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { post } from './helpers.js';
import { waitFor } from '../support/wait.js';
import { startServe, type Served } from './spawn.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import { NO_REDIS, noRedis, REDIS_SERVER, startRedis, type TestRedis } from '../support/redis-server.js';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js';

// `serve --redis --smtp` instances sharing one real redis-server, a loopback
// DNS server and the scripted SMTP server (test/support/smtp-server.ts): the
// session budget per server address and the catch-all results are shared (PRODUCT.md §7).
const KEY = 'msk_smtp_shared_key';
const mx = (host: string) => ({ mx: [{ exchange: host, priority: 10 }] });
const ZONES: Record<string, unknown> = {
  'mx.shared.test': { a: ['127.0.0.1'] },
  'catchall.one.test': mx('mx.shared.test'),
  'ok.test': mx('mx.shared.test'),
  'hang.test': mx('mx.hang.test'),
  'mx.hang.test': { a: ['127.0.0.1'] },
};
for (let i = 0; i < 6; i++) ZONES[`s${i}.shared.test`] = mx('mx.shared.test');
// two more names of the server at 127.0.0.1, with domains of their own
ZONES['mail.alias.test'] = { a: ['127.0.0.1'] };
ZONES['mx.other.test'] = { a: ['127.0.0.1'] };
for (let i = 0; i < 6; i++) ZONES[`n${i}.names.test`] = mx(['mx.shared.test', 'mail.alias.test', 'mx.other.test'][i % 3]!);
/** the lease set of the server at 127.0.0.1, whatever name the MX gives */
const LEASES = 'smtpserve:smtp-sessions:127.0.0.1';

let dir: string;
let keys: string;
let redis: TestRedis;
let dns: TestDnsServer;
let smtp: TestSmtpServer;
let a: Served;
let b: Served;
const running: Served[] = [];

const envWithout = (): NodeJS.ProcessEnv => {
  const env = { ...process.env };
  delete env.MAILSIFT_REDIS_URL;
  delete env.MAILSIFT_SMTP_PROXY;
  return env;
};

async function instance(...extra: string[]): Promise<Served> {
  const s = await startServe(
    [
      ...extra,
      '--keys-file',
      keys,
      '--rate-limit',
      '1000/60',
      '--dns-server',
      dns.address,
      '--redis',
      redis.url,
      '--redis-prefix',
      'smtpserve:',
      // generous: no test here times Redis out (a killed one fails at once), and a loaded machine
      // made 300 ms look like Redis down, splitting the shared session budget
      '--redis-timeout',
      '5000',
      '--smtp',
      '--smtp-port',
      String(smtp.port),
      '--smtp-timeout',
      '3000',
      '--smtp-per-host',
      '1',
      '--smtp-lease',
      '1',
      '--smtp-helo',
      'checker.example',
      '--metrics',
      '--smtp-allow-private',
    ],
    { dns: true, env: envWithout() },
  );
  running.push(s);
  return s;
}

const check = (s: Served, emails: string[]) => post(s.url, '/api/validate/bulk', { emails }, { key: KEY });
const rcpts = () => smtp.commands().filter((c) => c.startsWith('RCPT TO:'));

beforeAll(async () => {
  if (!REDIS_SERVER) return;
  dir = await mkdtemp(join(tmpdir(), 'mailsift-redis-smtp-'));
  keys = join(dir, 'keys.txt');
  await writeFile(keys, `${KEY}\n`);
  [redis, dns, smtp] = await Promise.all([startRedis(), startDnsServer({ zones: ZONES as never }), startSmtpServer()]);
  [a, b] = await Promise.all([instance(), instance()]);
});

afterAll(async () => {
  for (const s of running) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGTERM');
  await Promise.all(running.map((s) => s.exit));
  await Promise.all([redis?.stop(), dns?.close(), smtp?.close()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe.skipIf(noRedis())(`serve --redis --smtp: two instances, one Redis${NO_REDIS}`, () => {
  it('--smtp-per-host 1 holds across instances: the mail server never sees two sessions at once; /metrics counts them', async () => {
    smtp.maxOpen.set('127.0.0.1', 0);
    // six requests at once, three to each instance, each a domain of its own on
    // one MX host; every session lasts >= 150 ms (slow*), so any overlap shows
    const replies = await Promise.all(Array.from({ length: 6 }, (_, i) => check(i % 2 ? b : a, [`slow-ann@s${i}.shared.test`])));
    for (const r of replies) {
      expect(r.status).toBe(200);
      expect(r.json.results[0]).toMatchObject({ status: 'valid', details: { smtp: true, catchAll: false } });
    }
    expect(smtp.maxOpen.get('127.0.0.1')).toBe(1);

    const sessions = async (s: Served) => {
      const text = (await post(s.url, '/metrics', undefined, { method: 'GET', key: null, contentType: null })).json as string;
      return Number(/^mailsift_smtp_sessions_total\{outcome="completed"\} (\d+)$/m.exec(text)?.[1] ?? 0);
    };
    expect((await sessions(a)) + (await sessions(b))).toBe(6);
    expect(await sessions(a)).toBe(3);
  });

  it('the budget is per server address: three MX names of one server never get two sessions at once across instances', async () => {
    smtp.maxOpen.set('127.0.0.1', 0);
    const replies = await Promise.all(Array.from({ length: 6 }, (_, i) => check(i % 2 ? b : a, [`slow-ann@n${i}.names.test`])));
    for (const r of replies) {
      expect(r.status).toBe(200);
      expect(r.json.results[0]).toMatchObject({ status: 'valid', details: { smtp: true, catchAll: false } });
    }
    expect(smtp.maxOpen.get('127.0.0.1')).toBe(1);
  });

  it('a catch-all result one instance found is used by the other: no second probe', async () => {
    const probes = () => rcpts().filter((c) => /^RCPT TO:<x[a-z0-9]{19}@catchall\.one\.test>$/.test(c));
    const first = await check(a, ['ann@catchall.one.test']);
    expect(first.json.results[0]).toMatchObject({ status: 'risky', details: { smtp: true, catchAll: true } });
    expect(probes()).toHaveLength(1);
    const second = await check(b, ['bob@catchall.one.test']);
    expect(second.json.results[0]).toMatchObject({ status: 'risky', details: { smtp: true, catchAll: true } });
    expect(rcpts()).toContain('RCPT TO:<bob@catchall.one.test>');
    expect(probes()).toHaveLength(1);
    // and a finding: asked again on the other instance, the address is not dialled
    const before = rcpts().length;
    const again = await check(b, ['ann@catchall.one.test']);
    expect(again.json.results[0]).toMatchObject({ status: 'risky', details: { smtp: true, catchAll: true } });
    expect(rcpts().length).toBe(before);
  });

  it('Redis killed: both instances still answer with the mailbox check; back when it returns', async () => {
    await redis.kill();
    try {
      const [ra, rb] = await Promise.all([check(a, ['cy@ok.test']), check(b, ['di@ok.test'])]);
      expect(ra.json.results[0]).toMatchObject({ status: 'valid', details: { smtp: true } });
      expect(rb.json.results[0]).toMatchObject({ status: 'valid', details: { smtp: true } });
      for (const s of [a, b]) expect(s.stderr().match(/Redis at \S+ is unreachable/g)).toHaveLength(1);
    } finally {
      await redis.restart();
    }
    for (const s of [a, b]) {
      const connected = async () => (await post(s.url, '/readyz', undefined, { method: 'GET', key: null, contentType: null })).json?.redis === 'connected';
      await waitFor(connected, { what: 'serve to go back to Redis (GET /readyz)', timeoutMs: 5000, intervalMs: 50 });
    }
  });

  it('a lease held by an instance that was SIGKILLed runs out, and the other proceeds', async () => {
    const [c, d] = await Promise.all([instance(), instance('--drain-timeout', '1')]);
    const watcher = new Redis(redis.url);
    // every lease request for mx.hang.test, at Redis's time (ms): the acquire script takes 4 arguments, a renewal 2
    const leaseAsks: { at: number; instance: string }[] = [];
    const monitorOf = new Redis(redis.url);
    const monitor = await monitorOf.monitor();
    monitor.on('monitor', (time: string, args: string[]) => {
      if (/^evalsha$/i.test(args[0] ?? '') && args[3] === LEASES && args.length === 7)
        leaseAsks.push({ at: Number(time) * 1000, instance: args[4]!.split(':')[0]! });
    });
    try {
      // c opens a session to mx.hang.test (127.0.0.1) and waits for a reply that never comes
      const held = check(c, ['hang-ann@hang.test']).catch(() => undefined);
      await waitFor(() => rcpts().includes('RCPT TO:<hang-ann@hang.test>'), { what: 'c to ask for hang-ann', timeoutMs: 5000, intervalMs: 20 });
      expect(await watcher.zcard(LEASES)).toBe(1);
      // c's lease (1 s) was taken before now: unrenewed, it would be gone by leaseGoneBy
      const [seconds, micros] = await watcher.time();
      const leaseGoneBy = Number(seconds) * 1000 + Number(micros) / 1000 + 1000;
      // b wants the same host: it waits, renewals keep c's lease alive past its lease time
      const t0 = Date.now();
      const waiting = check(b, ['bob@hang.test']);
      // so does d, and then it is told to stop: waiting for a lease does not keep it alive
      const dWaits = check(d, ['cy@hang.test']).catch(() => undefined);
      // both wait: two instances besides c's have asked for the lease (bounded poll)
      const [cLease] = await watcher.zrange(LEASES, '0', '0');
      const cInstance = cLease!.split(':')[0];
      const askers = () => new Set(leaseAsks.filter((x) => x.instance !== cInstance).map((x) => x.instance)).size;
      await waitFor(() => askers() === 2, { what: 'b and d both to ask for the lease', timeoutMs: 10_000, intervalMs: 20 });
      const stopAt = Date.now();
      d.child.kill('SIGTERM');
      expect(await d.exit).toBe(0);
      // a d kept alive by its wait would not exit at all (c renews its lease until it is killed,
      // below): the bound need only be far from that, and was too tight at 3 s under load
      expect(Date.now() - stopAt).toBeLessThan(10_000);
      await dWaits;
      // wait (bounded) until a waiter has asked for the lease after c's would have run out unrenewed, and was refused
      await waitFor(() => leaseAsks.some((x) => x.at > leaseGoneBy), {
        what: 'a waiter to ask for the lease after it would have run out',
        timeoutMs: 10_000,
        intervalMs: 20,
      });
      expect(await watcher.zcard(LEASES)).toBe(1);
      expect(rcpts()).not.toContain('RCPT TO:<bob@hang.test>');
      c.child.kill('SIGKILL');
      await c.exit;
      const killedAt = Date.now();
      const r = await waiting;
      expect(r.json.results[0]).toMatchObject({ status: 'valid', details: { smtp: true } });
      expect(rcpts()).toContain('RCPT TO:<bob@hang.test>');
      // freed within the lease time (1 s) and a poll or two
      expect(Date.now() - killedAt).toBeLessThan(2500);
      expect(Date.now() - t0).toBeGreaterThan(1500);
      await held;
    } finally {
      watcher.disconnect();
      monitor.disconnect();
      monitorOf.disconnect();
    }
  });
});

// --smtp-lease out of range: test/cli/plan.test.ts
