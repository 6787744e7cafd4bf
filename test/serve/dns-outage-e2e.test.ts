import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import { parseCsv, runCli } from '../support/run-cli.js';
import { waitFor } from '../support/wait.js';
import { startServe, type Served } from './spawn.js';

// `serve` with its resolver dead must not hide it: /readyz is not ready, a
// metric counts the failures, and its answers say that they determined
// nothing, so that a `validate` client in front of it exits 4 and keeps none
// of them as final.

const KEY = 'dns-outage-key-3e1f';
let dir: string;
let dns: TestDnsServer;
let served: Served | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mailsift-serve-dns-'));
  dns = await startDnsServer({ zones: { 'a.test': { mx: [{ exchange: 'mx.a.test', priority: 10 }] } } });
  await writeFile(join(dir, 'keys'), `${KEY}\n`);
});
afterEach(async () => {
  served?.child.kill('SIGTERM');
  await served?.exit;
  served = undefined;
  await dns.close();
  await rm(dir, { recursive: true, force: true });
});

const get = async (url: string): Promise<{ status: number; text: string }> => {
  const r = await fetch(url);
  return { status: r.status, text: await r.text() };
};

describe('serve with a dead resolver, and a validate client in front of it', () => {
  it('/readyz says unavailable (503), the metric counts DNS failures, the client exits 4 and records nothing', async () => {
    dns.down = true;
    served = await startServe(['--keys-file', join(dir, 'keys'), '--dns-server', dns.address, '--dns-timeout', '300', '--metrics'], { dns: true });
    const url = served.url;

    let ready = await get(`${url}/readyz`);
    await waitFor(async () => (ready = await get(`${url}/readyz`)).status === 503, { what: 'GET /readyz to answer 503', intervalMs: 100 });
    expect(JSON.parse(ready.text)).toEqual({ status: 'unavailable', redis: 'not configured', dns: 'unusable' });

    await writeFile(join(dir, 'list.txt'), 'ann@a.test\ninfo@a.test\nbob@a.test\n');
    const env = { MAILSIFT_BASE_URL: url, MAILSIFT_API_KEY: KEY };
    const args = ['validate', 'list.txt', '--journal', 'run.journal', '--cache', 'verdicts.cache', '-q'];
    const run = await runCli(args, { cwd: dir, env });
    expect(run.code, run.stderr).toBe(4);
    // said even with -q: the API could not determine them, re-run later
    expect(run.stderr).toMatch(
      /^mailsift: the API answered UNDETERMINED for some addresses: it could not determine them for now: .*re-run .*\(3 addresses without a verdict\)$/m,
    );
    const [header, ...rows] = parseCsv(run.stdout);
    const at = (name: string) => header!.indexOf(name);
    expect(rows.map((r) => [r[at('email')], r[at('status')], r[at('error')]])).toEqual([
      ['ann@a.test', 'unknown', 'UNDETERMINED'],
      ['info@a.test', 'unknown', 'UNDETERMINED'],
      ['bob@a.test', 'unknown', 'UNDETERMINED'],
    ]);
    for (const file of ['run.journal', 'verdicts.cache']) {
      expect((await readFile(join(dir, file), 'utf8')).split('\n').slice(1).filter(Boolean), file).toEqual([]);
    }

    const metrics = await get(`${url}/metrics`);
    const failures = /^mailsift_dns_failures_total\{code="ETIMEOUT"\} (\d+)$/m.exec(metrics.text);
    expect(Number(failures?.[1])).toBeGreaterThan(0);

    // the bulk answer itself, as any client of the API sees it
    const bulk = await fetch(`${url}/api/validate/bulk`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ emails: ['ann@a.test'] }),
    }).then((r) => r.json() as Promise<{ results: unknown[] }>);
    expect(bulk.results[0]).toMatchObject({
      email: 'ann@a.test',
      status: 'unknown',
      error: { code: 'UNDETERMINED', message: expect.stringContaining("this server's DNS is unusable"), details: 'dns_error' },
    });
  }, 60_000);

  it('a determined answer carries no error, and /readyz says DNS is fine', async () => {
    served = await startServe(['--keys-file', join(dir, 'keys'), '--dns-server', dns.address, '--dns-timeout', '10000'], { dns: true });
    const one = await fetch(`${served.url}/api/validate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ann@a.test' }),
    }).then((r) => r.json());
    expect(one).toMatchObject({ status: 'valid' });
    expect(one).not.toHaveProperty('error');
    const ready = await get(`${served.url}/readyz`);
    expect([ready.status, JSON.parse(ready.text)]).toEqual([200, { status: 'ready', redis: 'not configured', dns: 'ok' }]);
  }, 60_000);

  it('a client sending only dead domains does not take it out of service: their rows are undetermined, /readyz stays ready', async () => {
    // forty domains whose servers fail, after one that answered: the resolver still answers about that one
    dns.zones = { ...dns.zones, ...Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`dead${i}.test`, { servfail: true }])) };
    served = await startServe(['--keys-file', join(dir, 'keys'), '--dns-server', dns.address, '--dns-timeout', '10000'], { dns: true });
    const bulk = (emails: string[]) =>
      fetch(`${served!.url}/api/validate/bulk`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ emails }),
      }).then((r) => r.json() as Promise<{ results: { status: string; error?: { code: string; message: string } }[] }>);
    expect((await bulk(['ann@a.test'])).results[0]).toMatchObject({ status: 'valid' });
    const dead = await bulk(Array.from({ length: 40 }, (_, i) => `x@dead${i}.test`));
    expect(new Set(dead.results.map((r) => `${r.status} ${r.error?.code} ${r.error?.message}`))).toEqual(
      new Set(['unknown UNDETERMINED not determined, for a temporary reason; ask again later']),
    );
    const ready = await get(`${served.url}/readyz`);
    expect([ready.status, JSON.parse(ready.text)]).toEqual([200, { status: 'ready', redis: 'not configured', dns: 'ok' }]);
  }, 60_000);
});
