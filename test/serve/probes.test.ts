import { afterEach, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { ServeMetrics } from '../../src/serve/metrics.js';
import { post, serve } from './helpers.js';
import { startServe } from './spawn.js';

// /healthz, /readyz, /metrics, absolute-form targets, and the SIGTERM drain (PRODUCT.md §7).
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

async function started(metrics?: ServeMetrics, requests = 2) {
  const s = await serve({ metrics, rateLimit: { requests, seconds: 60 } });
  closers.push(s.close);
  return s;
}

const get = (url: string, path: string) => post(url, path, undefined, { method: 'GET', key: null, contentType: null });

/** One raw HTTP/1.1 exchange, for request targets fetch() will not send. */
function raw(url: string, request: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(port), hostname);
    let got = '';
    sock.setEncoding('utf8').on('data', (d: string) => (got += d));
    sock.on('end', () => resolve(got));
    sock.on('error', reject);
    sock.setTimeout(5000, () => sock.destroy(new Error(`no answer within 5 s: ${got}`)));
    sock.write(request);
  });
}

describe('probes', () => {
  it('/healthz and /readyz answer without a key and are never rate limited', async () => {
    const s = await started(undefined, 1);
    for (let i = 0; i < 5; i++) {
      const h = await get(s.url, '/healthz');
      expect(h.status).toBe(200);
      expect(h.json).toEqual({ status: 'ok' });
      const r = await get(s.url, '/readyz');
      expect(r.status).toBe(200);
      expect(r.json).toEqual({ status: 'ready', redis: 'not configured' });
    }
    // the API's own window was not touched by the probes
    const api = await post(s.url, '/api/validate', { email: 'jane@example.com' });
    expect(api.status).toBe(200);
    expect(api.headers.get('x-ratelimit-remaining')).toBe('0');
    const other = await post(s.url, '/healthz', {});
    expect(other.status).toBe(405);
    expect(other.headers.get('allow')).toBe('GET, HEAD');
    // probes that succeed are not logged: a load balancer polls them all day
    expect(s.log.join('\n')).not.toMatch(/GET \/(healthz|readyz) 200/);
  });

  it('/readyz says degraded while outbound SMTP is judged blocked (still 200; ?strict 503), ready again when it works', async () => {
    let state: 'ok' | 'blocked' = 'blocked';
    const s = await serve({ smtpState: () => state });
    closers.push(s.close);
    const r = await get(s.url, '/readyz');
    expect([r.status, r.json]).toEqual([200, { status: 'degraded', redis: 'not configured', smtp: 'blocked' }]);
    expect((await get(s.url, '/readyz?strict')).status).toBe(503);
    state = 'ok';
    const again = await get(s.url, '/readyz');
    expect([again.status, again.json]).toEqual([200, { status: 'ready', redis: 'not configured', smtp: 'ok' }]);
  });

  it('/metrics is absent without --metrics (an ordinary unknown path)', async () => {
    const s = await started();
    const r = await get(s.url, '/metrics');
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe('NOT_FOUND');
  });

  it('--metrics: requests by route and status, addresses by status, latency, 429s, in the Prometheus text format', async () => {
    const s = await started(new ServeMetrics(), 2);
    await post(s.url, '/api/validate/bulk', { emails: ['jane@example.com', 'bad-address', 'jane@mailinator.com'] });
    await post(s.url, '/api/validate', { email: 'joe@example.com' });
    await post(s.url, '/api/validate', { email: 'joe@example.com' }); // 429
    await post(s.url, '/api/validate', { email: 'joe@example.com' }, { key: 'wrong-key' }); // 401
    await post(s.url, '/private/jane@example.com', {}); // an unknown path: "other", never the path itself
    const m = await get(s.url, '/metrics');
    expect(m.status).toBe(200);
    expect(m.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = m.json as string;
    const value = (series: string) => Number(new RegExp(`^${series.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(value('mailsift_http_requests_total{route="/api/validate/bulk",status="200"}')).toBe(1);
    expect(value('mailsift_http_requests_total{route="/api/validate",status="200"}')).toBe(1);
    expect(value('mailsift_http_requests_total{route="/api/validate",status="429"}')).toBe(1);
    expect(value('mailsift_http_requests_total{route="/api/validate",status="401"}')).toBe(1);
    // the key's window was spent: the unknown path got 429 too
    expect(value('mailsift_http_requests_total{route="other",status="429"}')).toBe(1);
    expect(value('mailsift_rate_limited_total{bucket="key"}')).toBe(2);
    expect(value('mailsift_addresses_validated_total{status="valid"}')).toBe(2);
    expect(value('mailsift_addresses_validated_total{status="invalid"}')).toBe(1);
    expect(value('mailsift_addresses_validated_total{status="risky"}')).toBe(1);
    expect(value('mailsift_http_request_duration_seconds_count{route="/api/validate"}')).toBe(3);
    expect(text).toMatch(/^# TYPE mailsift_http_request_duration_seconds histogram$/m);
    expect(text).toMatch(/^# TYPE mailsift_smtp_sessions_total counter$/m);
    expect(text).toMatch(/^mailsift_process_resident_memory_bytes \d+/m);
    expect(text).not.toContain('jane@');
    expect(text).not.toContain('/private');
  });

  it('the SMTP hook counts sessions open and how they ended', async () => {
    const metrics = new ServeMetrics();
    const end = metrics.smtpSessionOpened();
    const other = metrics.smtpSessionOpened();
    let text = (await metrics.text()).body;
    expect(text).toMatch(/^mailsift_smtp_sessions_open 2$/m);
    end('ok');
    end('ok'); // a second call is ignored
    other('timeout');
    text = (await metrics.text()).body;
    expect(text).toMatch(/^mailsift_smtp_sessions_open 0$/m);
    expect(text).toMatch(/^mailsift_smtp_sessions_total\{outcome="ok"\} 1$/m);
    expect(text).toMatch(/^mailsift_smtp_sessions_total\{outcome="timeout"\} 1$/m);
  });
});

describe('absolute-form request targets (RFC 9112 §3.2.2)', () => {
  it('are routed like their path', async () => {
    const s = await started();
    const { host } = new URL(s.url);
    const body = JSON.stringify({ email: 'jane.doe@example.com' });
    const ok = await raw(
      s.url,
      `POST http://${host}/api/validate HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer test-key-one\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(ok).toMatch(/^HTTP\/1\.1 200 /);
    expect(ok).toContain('"email":"jane.doe@example.com"');
    expect(ok).toMatch(/\r\nX-RateLimit-Limit: 2\r\n/i);
    const probe = await raw(s.url, `GET HTTP://${host}/healthz?x=1 HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    expect(probe).toMatch(/^HTTP\/1\.1 200 /);
    const unknown = await raw(s.url, `POST http://${host}/nope HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
    expect(unknown).toMatch(/^HTTP\/1\.1 404 /);
    expect(s.log).toContain(s.log.find((l) => /^POST \/api\/validate 200 addresses=1 /.test(l)));
  });
});

describe('SIGTERM', () => {
  it('stops accepting, lets a request in flight finish, then exits 0; a stuck one is cut after --drain-timeout', async () => {
    const s = await startServe(['--drain-timeout', '2']);
    const key = /API key for this run: (\S+)/.exec(s.stderr())![1]!;
    const { hostname, port } = new URL(s.url);
    const body = JSON.stringify({ email: 'jane.doe@example.com' });
    const head = `POST /api/validate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    // one request sends half its body, another never finishes its own
    const open = (): Promise<{ sock: ReturnType<typeof connect>; reply: Promise<string> }> =>
      new Promise((resolve) => {
        const sock = connect(Number(port), hostname, () => {
          let got = '';
          sock.setEncoding('utf8').on('data', (d: string) => (got += d));
          const reply = new Promise<string>((r) => sock.on('close', () => r(got)));
          sock.on('error', () => {});
          resolve({ sock, reply });
        });
      });
    const inFlight = await open();
    const stuck = await open();
    inFlight.sock.write(head + body.slice(0, 10));
    stuck.sock.write(head + body.slice(0, 10));
    await new Promise((r) => setTimeout(r, 100));

    const t0 = Date.now();
    s.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    // no new connections
    const refused = await new Promise<string>((resolve) => {
      const c = connect(Number(port), hostname);
      c.on('connect', () => (c.destroy(), resolve('connected')));
      c.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
    inFlight.sock.write(body.slice(10));
    const answer = await inFlight.reply;
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toMatch(/\r\nConnection: close\r\n/i);
    expect(await s.exit).toBe(0);
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(1900); // the stuck request held the drain...
    expect(took).toBeLessThan(5000); // ...but only up to --drain-timeout
    expect(await stuck.reply).not.toMatch(/^HTTP\/1\.1 200/);
  });
});
