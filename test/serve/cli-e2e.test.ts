import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { post } from './helpers.js';
import { BIN, startServe } from './spawn.js';
import { runInProcess } from '../support/run-in-process.js';
import { waitFor } from '../support/wait.js';

let dir: string;
beforeAll(async () => (dir = await mkdtemp(join(tmpdir(), 'mailsift-serve-cli-'))));
afterAll(() => rm(dir, { recursive: true, force: true }));

function keysCreate(file: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, 'keys', 'create', '--keys-file', file], { encoding: 'utf8', timeout: 10_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('mailsift serve (spawned)', () => {
  it('prints the URL and a generated key once, serves with that key, and exits 0 on SIGTERM', async () => {
    const s = await startServe([]);
    const key = /API key for this run: (\S+)/.exec(s.stderr())?.[1];
    expect(key).toMatch(/^msk_/);
    const ok = await post(s.url, '/api/validate', { email: 'jane.doe@example.com' }, { key });
    expect(ok.status).toBe(200);
    expect((await post(s.url, '/api/validate', { email: 'jane.doe@example.com' }, { key: 'wrong' })).status).toBe(401);
    s.child.kill('SIGTERM');
    expect(await s.exit).toBe(0);
    const err = s.stderr();
    expect(err.split(key!).length - 1).toBe(1); // printed once, never logged again
    expect(err).toMatch(/^mailsift serve: POST \/api\/validate 200 addresses=1 /m);
    expect(err).not.toContain('jane.doe');
  });

  it('keys create appends a new key per call, prints it once, and serve accepts every key of the file', async () => {
    const file = join(dir, 'keys.txt');
    await writeFile(file, '# our keys\nold-key'); // no final newline: the new key must not fuse with it
    const a = keysCreate(file);
    const b = keysCreate(file);
    expect(a.status).toBe(0);
    expect(b.status).toBe(0);
    const [ka, kb] = [a.stdout.trim(), b.stdout.trim()];
    expect(ka).toMatch(/^msk_\S{43}$/);
    expect(kb).not.toBe(ka);
    expect(a.stderr).toBe('');
    expect(await readFile(file, 'utf8')).toBe(`# our keys\nold-key\n${ka}\n${kb}\n`);

    const s = await startServe(['--keys-file', file, '--shape', 'b']);
    try {
      expect(s.stderr()).not.toMatch(/API key for this run/);
      for (const key of ['old-key', ka, kb]) {
        const r = await post(s.url, '/api/validate', { email: 'jane.doe@example.com' }, { key });
        expect(r.status).toBe(200);
        expect(r.json.data.email).toBe('jane.doe@example.com');
      }
    } finally {
      s.child.kill('SIGINT');
      expect(await s.exit).toBe(0);
    }
    expect(s.stderr()).not.toContain(ka);
  });

  it('a port already taken or unusable TLS files are usage errors (exit 2, one line, no stack)', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    try {
      const port = String((taken.address() as AddressInfo).port);
      const busy = spawnSync(process.execPath, [BIN, 'serve', '--port', port], { encoding: 'utf8', timeout: 10_000 });
      expect(busy.status).toBe(2);
      expect(busy.stderr).not.toMatch(/\n\s+at /);
      expect(busy.stderr).toMatch(new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port} \\(EADDRINUSE\\)`));
    } finally {
      taken.close();
    }
    const junk = join(dir, 'junk.pem');
    await writeFile(junk, 'not a certificate\n');
    const tls = spawnSync(process.execPath, [BIN, 'serve', '--port', '0', '--tls-cert', junk, '--tls-key', junk], { encoding: 'utf8', timeout: 10_000 });
    expect(tls.status).toBe(2);
    expect(tls.stderr).toMatch(/--tls-cert\/--tls-key: not a usable PEM/);
    expect(tls.stderr).not.toMatch(/\n\s+at /);
  });

  // serve's flags, alone and together: test/cli/plan.test.ts
  it.each([[['keys', 'create'], /--keys-file/]])('%j is a usage error (exit 2, one line, no stack)', (args, message) => {
    const r = spawnSync(process.execPath, [BIN, ...args, '--port', '0'], { encoding: 'utf8', timeout: 10_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('mailsift serve on SIGTERM', () => {
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
    // both are requests in flight once the server has read their headers: it has, when it
    // has answered a request sent after them
    const probe = await open();
    probe.sock.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(await probe.reply).toMatch(/^HTTP\/1\.1 200 /);

    const t0 = Date.now();
    s.child.kill('SIGTERM');
    // no new connections, soon after the signal
    const attempt = (): Promise<string> =>
      new Promise<string>((resolve) => {
        const c = connect(Number(port), hostname);
        c.on('connect', () => (c.destroy(), resolve('connected')));
        c.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
      });
    await waitFor(async () => (await attempt()) === 'ECONNREFUSED', { what: 'serve to refuse new connections after SIGTERM', timeoutMs: 1500, intervalMs: 20 });
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

describe('serve start (usability)', () => {
  it('prints its rate limit and a ready-to-paste MAILSIFT_BASE_URL line that works', async () => {
    const s = await startServe(['--rate-limit', '1/60']);
    try {
      await waitFor(() => s.stderr().includes('MAILSIFT_API_KEY='), { what: 'the lines serve prints after "listening on"' });
      const err = s.stderr();
      expect(err).toContain('mailsift serve: rate limit 1 request per 60 s per key (--rate-limit); response shape a\n');
      const url = /^export MAILSIFT_BASE_URL=(\S+)$/m.exec(err)?.[1];
      expect(url).toBe(s.url);
      const key = /API key for this run: (\S+)/.exec(err)![1]!;
      const r = await runInProcess(['validate'], { env: { MAILSIFT_BASE_URL: url, MAILSIFT_API_KEY: key }, stdin: 'a@example.com\n' });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/^mailsift: 1 row in /m); // and "1 row", not "1 rows"
    } finally {
      s.child.kill('SIGTERM');
      await s.exit;
    }
  });
});
