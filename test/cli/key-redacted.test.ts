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
      res.end(
        JSON.stringify({
          error: { code: `BAD_GATEWAY ${req.headers.authorization}`, message: 'upstream failed' },
          echo: { authorization: req.headers.authorization },
        }),
      );
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

describe('the API key echoed inside a 200 answer', () => {
  // A gateway (or an API) that answers and repeats the key in an address's
  // texts — its error message, its provider: those are written to the
  // output, the journal and the report, which must not hold the key either.
  let echo: Server;
  let echoUrl: string;
  beforeAll(async () => {
    echo = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const key = (req.headers.authorization ?? '').replace(/^Bearer /, '');
        const { emails } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { emails: string[] };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            results: emails.map((email, i) =>
              i === 0
                ? { email, isValid: true, status: 'valid', confidence: 0.9, provider: `gateway (${key})`, details: {} }
                : { email, isValid: false, status: 'unknown', error: { code: 'UPSTREAM', message: `upstream refused the key ${key}` }, details: {} },
            ),
          }),
        );
      });
    });
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => echo.close(r)));

  it.each(['ndjson', 'csv'])('neither the %s output nor the journal, the summary, the report or -v holds it', async (format) => {
    const journal = join(dir, `j-${format}.journal`);
    const r = await runInProcess(
      [
        'validate',
        'in.txt',
        '-v',
        '--retries',
        '0',
        '--format',
        format,
        '-o',
        `echo.${format}`,
        '--summary',
        `echo-${format}.json`,
        '--report',
        `echo-${format}.html`,
        '--journal',
        journal,
      ],
      {
        cwd: dir,
        env: { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: echoUrl },
      },
    );
    expect(r.code, r.stderr).toBe(4);
    const output = await readFile(join(dir, `echo.${format}`), 'utf8');
    expect(output).toContain('[redacted]');
    const written = [
      r.stderr,
      r.stdout,
      output,
      await readFile(journal, 'utf8'),
      await readFile(join(dir, `echo-${format}.json`), 'utf8'),
      await readFile(join(dir, `echo-${format}.html`), 'utf8'),
    ].join('\n');
    expect(written).not.toContain(KEY);
    expect(written).not.toContain(KEY.slice(0, 12));
  });
});
