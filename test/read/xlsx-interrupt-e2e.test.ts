import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, parseCsv, runCli } from '../support/run-cli.js';
import { excelParts, zip } from '../support/workbook.js';
import { contacts } from '../support/contacts.js';
import { waitFor } from '../support/wait.js';

// A workbook piped on stdin is copied to a temp file before it can be read (a
// zip is read from its end). A signal while it is copied must end the run at
// once with 130 (143), say so in one line, and leave no temp file behind.
describe('a signal while a workbook is copied from stdin', () => {
  it.each([
    ['SIGINT', 130, 'interrupted'],
    ['SIGTERM', 143, 'terminated'],
  ] as const)('%s: exit %i, one line, the temp copy removed', async (signal, code, word) => {
    const tmp = mkdtempSync(join(tmpdir(), 'mailsift-spool-'));
    const child = spawn(process.execPath, [BIN, 'validate', '-', '--engine', 'local', '--no-dns', '-q'], {
      env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', TMPDIR: tmp },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdout.resume();
    const closed = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('close', (c, s) => resolve([c, s])));
    // the first half of a workbook, and the pipe left open: a slow producer
    const book = zip(excelParts(contacts(300).cells));
    child.stdin.write(book.subarray(0, book.length >> 1));
    await waitFor(() => readdirSync(tmp).some((f) => f.startsWith('mailsift-')), { what: 'the copy of stdin to start', timeoutMs: 10_000, intervalMs: 50 });
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const [exit, bySignal] = await closed;
    clearTimeout(timer);
    child.stdin.destroy();
    expect([exit, bySignal]).toEqual([code, null]);
    expect(stderr).toBe(`mailsift: ${word} while reading stdin; nothing was sent\n`);
    expect(readdirSync(tmp)).toEqual([]);
  });
});

describe('a workbook piped on stdin', () => {
  it('is read whole, and its temp copy is gone at the end', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'mailsift-spool-'));
    const r = await runCli(['validate', '--engine', 'local', '--no-dns', '--columns', 'status', '-q'], {
      stdin: zip(excelParts(contacts(300).cells)),
      env: { TMPDIR: tmp },
    });
    expect(r.code).toBe(0);
    expect(parseCsv(r.stdout).map((row) => row.slice(0, -1))).toEqual(contacts(300).shown);
    expect(readdirSync(tmp)).toEqual([]);
  });
});
