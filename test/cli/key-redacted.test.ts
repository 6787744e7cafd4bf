import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../support/run-in-process.js';

// A gateway in front of the API that echoes the request's headers in its error
// body (and even in its error code): the key must appear nowhere mailsift
// prints or writes, --verbose included.
const KEY = 'sk_live_9f3c1d7e5b2a4c68';
let server: Server;
let url: string;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mailsift-key-redacted-'));
  await writeFile(join(dir, 'in.txt'), 'a@example.com\nb@example.com\n');
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: `BAD_GATEWAY ${req.headers.authorization}`, message: 'upstream failed' }, echo: { authorization: req.headers.authorization } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  await rm(dir, { recursive: true, force: true });
});

describe('the API key echoed by a gateway', () => {
  it('-v shows the error body with the key redacted; stderr, the output and the summary never hold it', async () => {
    const r = await runInProcess(['validate', 'in.txt', '-v', '--retries', '0', '-o', 'out.csv', '--summary', 's.json'], {
      cwd: dir,
      env: { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: url },
    });
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toMatch(/< HTTP 502 .* body: .*"authorization":"Bearer \[redacted\]"/);
    const written = r.stderr + r.stdout + (await readFile(join(dir, 'out.csv'), 'utf8')) + (await readFile(join(dir, 's.json'), 'utf8'));
    expect(written).not.toContain(KEY);
    expect(written).not.toContain(KEY.slice(0, 12));
  });
});
