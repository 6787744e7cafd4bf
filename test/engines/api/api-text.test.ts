// Issue 29.12, the API's side: text that comes from the API is capped where it
// enters and loses its control characters, whatever the server sends.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../../support/fault-server.js';
import { parseCsv } from '../../support/run-cli.js';
import { runInProcess } from '../../support/run-in-process.js';

let server: FaultServer | undefined;
afterEach(async () => server?.close());

const env = () => ({ MAILSIFT_API_KEY: 'k', MAILSIFT_BASE_URL: server!.url });

it('a 10 MB provider becomes a 100-character cell', async () => {
  server = await startFaultServer({ apiKey: 'k', provider: 'P'.repeat(10_000_000) });
  const r = await runInProcess(['validate'], { env: env(), stdin: 'a@example.com\n' });
  expect(r.code, r.stderr.slice(0, 500)).toBe(0);
  const [header, row] = parseCsv(r.stdout);
  expect(row![header!.indexOf('provider')]).toBe('P'.repeat(100));
}, 60_000);

it('an error.code of a megabyte with terminal escapes and newlines: a short, clean line on stderr and in the summary', async () => {
  const code = `\u001b]0;owned\u0007\u001b[2J\r\nFAKE: all good\n${'X'.repeat(1_000_000)}`;
  server = await startFaultServer({ apiKey: 'k', fault: () => ({ status: 422, code }) });
  const summary = join(mkdtempSync(join(tmpdir(), 'mailsift-api-text-')), 's.json');
  const r = await runInProcess(['validate', '--summary', summary], { env: env(), stdin: 'a@example.com\n' });
  expect(r.code).toBe(4);
  expect(r.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f]/); // no escape, no carriage return
  expect(r.stderr).not.toMatch(/^FAKE/m); // the server's newline did not start a line of its own
  expect(Math.max(...r.stderr.split('\n').map((l) => l.length))).toBeLessThan(400);
  expect(r.stderr).toContain('HTTP 422');
  expect(readFileSync(summary, 'utf8').length).toBeLessThan(5_000);
  const [header, row] = parseCsv(r.stdout);
  expect(row![header!.indexOf('error')]!.length).toBeLessThan(400);
}, 60_000);
