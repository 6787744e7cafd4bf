import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../../support/dns-server.js';
import { runInProcess } from '../../support/run-in-process.js';

// Runs the command in-process (main(argv, io)).
const KEY = 'sk-test-e2e-secret-0123456789';

const run = (args: string[], env: Record<string, string> = {}) => runInProcess(args, { env, timeoutMs: 20_000 });

let dnsServer: TestDnsServer;
let api: Server;
let apiUrl: string;
let keyFile: string;

beforeAll(async () => {
  dnsServer = await startDnsServer();
  // a minimal API: the good key gets a Shape A verdict, any other a 401
  api = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (req.headers.authorization !== `Bearer ${KEY}`) {
        res.statusCode = 401;
        res.end(JSON.stringify({ success: false, error: { code: 'UNAUTHORIZED', message: 'bad key', details: '' } }));
        return;
      }
      const { email } = JSON.parse(body) as { email: string };
      if (email.startsWith('hang')) return; // never answers
      res.end(
        JSON.stringify({
          success: true,
          email,
          isValid: true,
          status: 'valid',
          confidence: 0.97,
          provider: 'upstream-x',
          responseTime: 12,
          details: { syntax: true, domain: 'example.com', mx: true, disposable: false, role: false },
        }),
      );
    });
  });
  await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
  apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  const dir = mkdtempSync(join(tmpdir(), 'mailsift-check-'));
  keyFile = join(dir, 'key');
  writeFileSync(keyFile, `${KEY}\n`);
});

afterAll(async () => {
  await dnsServer.close();
  api.closeAllConnections();
  await new Promise((r) => api.close(r));
});

describe('mailsift check', () => {
  it('--json with the local engine against a loopback DNS server', async () => {
    const r = await run(['check', '--json', '--engine', 'local', '--dns-server', dnsServer.address, 'Jane@MX.test']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      email: 'Jane@MX.test',
      isValid: true,
      status: 'valid',
      reason: '',
      confidence: 0.9,
      provider: 'mailsift-local',
      details: { syntax: true, domain: 'mx.test', mx: true, disposable: false, role: false, free: false },
    });
    expect(r.stderr).toBe('');
  });

  it('key: value lines when stdout is not a terminal; invalid is still a verdict (exit 0)', async () => {
    const r = await run(['check', '--dns-server', dnsServer.address, 'jane@nullmx.test']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('status: invalid\nreason: no_mail_server\n');
    expect(r.stdout).toContain('mx: no\n');
    // no key configured: the one-line notice goes to stderr
    expect(r.stderr).toMatch(/offline engine/);
  });

  it('a broken resolver: status unknown and one warning line, not invalid', async () => {
    const broken = await startDnsServer({ broken: true });
    const r = await run(['check', '--json', '--engine', 'local', '--dns-server', broken.address, 'jane@mx.test']);
    await broken.close();
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'unknown', details: { syntax: true } });
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/warning: DNS is unusable/);
  });

  it('uses the API when a key is configured, never showing the key', async () => {
    const r = await run(['check', '--json', '--base-url', apiUrl, '--api-key-file', keyFile, 'jane@example.com']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ email: 'jane@example.com', status: 'valid', provider: 'upstream-x' });
    expect(r.stdout + r.stderr).not.toContain(KEY);
  });

  it('gives up on an API that does not answer after --timeout, with exit 4 and the reason', async () => {
    const started = Date.now();
    const r = await run(['check', '--timeout', '0.3', '--retries', '1', '--base-url', apiUrl, '--api-key-file', keyFile, 'hang@example.com']);
    expect(r.code).toBe(4);
    expect(r.stdout).toMatch(
      /error: +TIMEOUT: no answer within 0\.3 s to POST http:\/\/127\.0\.0\.1:\d+\/api\/validate \(timed out\); gave up after 1 retry\n/,
    );
    expect(Date.now() - started).toBeLessThan(15_000); // not the 30 s default, twice
  });

  it('exits 3 when the API refuses the key', async () => {
    const r = await run(['check', 'jane@example.com'], { MAILSIFT_API_KEY: 'wrong-key', MAILSIFT_BASE_URL: apiUrl });
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/refused the key/);
    expect(r.stderr).not.toContain('wrong-key');
  });

  // every usage error of check, in words: test/cli/plan.test.ts; here one through main
  it.each([
    [
      ['check', '--dns-server', 'dns.example', 'a@b.test'],
      /^mailsift: option '--dns-server <host\[:port\]>' argument 'dns\.example' is invalid\. expected an IP address/,
    ],
  ])('exits 2 for %j', async (args, message) => {
    const r = await run(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });
});
