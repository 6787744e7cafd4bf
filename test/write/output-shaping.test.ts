import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { localDnsForFile } from '../support/local-dns.js';
import { startFaultServer } from '../support/fault-server.js';
import { parseCsv } from '../support/run-cli.js';
import { runInProcess } from '../support/run-in-process.js';

// --columns, --format txt and --split, run in-process (main(argv, io)), on the offline
// engine against the loopback DNS server.
const dir = mkdtempSync(join(tmpdir(), 'mailsift-shape-'));
const file = (name: string, content: string): string => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
const dns = localDnsForFile();
const local = dns.localFlags;

// one of each status: valid, invalid (precheck), risky (role), unknown (the resolver fails)
const USERS = 'id,name,email\n' + '1,"Doe, Jane",Jane@mx.test\n' + '2,Bob,not an address\n' + '3,Ops,admin@mx.test\n' + '4,Zed,zed@servfail.test\n';

describe('output shaping', () => {
  it('--columns picks and orders the verdict columns after the input columns', async () => {
    const r = await runInProcess(['validate', file('users.csv', USERS), '--columns', 'is_valid,status', ...local()]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(parseCsv(r.stdout)).toEqual([
      ['id', 'name', 'email', 'is_valid', 'status'],
      ['1', 'Doe, Jane', 'Jane@mx.test', 'true', 'valid'],
      ['2', 'Bob', 'not an address', 'false', 'invalid'],
      ['3', 'Ops', 'admin@mx.test', 'true', 'risky'],
      ['4', 'Zed', 'zed@servfail.test', '', 'unknown'],
    ]);
  });

  it('--columns places email anywhere for a text input, and first when not named: the address always comes out', async () => {
    const list = file('list.txt', 'Jane@mx.test\nnope\nann@mx.test\n');
    const r = await runInProcess(['validate', list, '--columns', 'status,email', ...local()]);
    expect(r.code).toBe(0);
    expect(parseCsv(r.stdout)).toEqual([
      ['status', 'email'],
      ['valid', 'Jane@mx.test'],
      ['invalid', 'nope'],
      ['valid', 'ann@mx.test'],
    ]);
    const only = await runInProcess(['validate', list, '--columns', 'status,reason', ...local()]);
    expect(only.code).toBe(0);
    expect(parseCsv(only.stdout)).toEqual([
      ['email', 'status', 'reason'],
      ['Jane@mx.test', 'valid', ''],
      ['nope', 'invalid', 'syntax'],
      ['ann@mx.test', 'valid', ''],
    ]);
  });

  it('the README recipe: --column picks a quoted CSV cell, --format txt writes just the good addresses', async () => {
    const r = await runInProcess(['validate', file('users2.csv', USERS), '--column', 'email', '--only', 'valid', '--format', 'txt', ...local()]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('Jane@mx.test\n');
    // and by the output's extension
    const out = join(dir, 'good.txt');
    const byName = await runInProcess(['validate', file('users3.csv', USERS), '--only', 'valid,risky', '-o', out, ...local()]);
    expect(byName.code).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe('Jane@mx.test\nadmin@mx.test\n');
  });

  it('--split writes one file per status in one run, columns and format as chosen', async () => {
    const out = join(dir, 'sorted');
    const r = await runInProcess(['validate', file('users4.csv', USERS), '--split', out, '--columns', 'status', ...local()]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(readdirSync(out).sort()).toEqual(['invalid.csv', 'risky.csv', 'unknown.csv', 'valid.csv']);
    const rows = (status: string): string[][] => parseCsv(readFileSync(join(out, `${status}.csv`), 'utf8'));
    expect(rows('valid')).toEqual([
      ['id', 'name', 'email', 'status'],
      ['1', 'Doe, Jane', 'Jane@mx.test', 'valid'],
    ]);
    expect(rows('invalid')).toEqual([
      ['id', 'name', 'email', 'status'],
      ['2', 'Bob', 'not an address', 'invalid'],
    ]);
    expect(rows('risky')[1]).toEqual(['3', 'Ops', 'admin@mx.test', 'risky']);
    expect(rows('unknown')[1]).toEqual(['4', 'Zed', 'zed@servfail.test', 'unknown']);

    const txt = join(dir, 'sorted-txt');
    const t = await runInProcess(['validate', file('users5.csv', USERS), '--split', txt, '--format', 'txt', '--only', 'valid,invalid', ...local()]);
    expect(t.code).toBe(0);
    expect(readdirSync(txt).sort()).toEqual(['invalid.txt', 'valid.txt']);
    expect(readFileSync(join(txt, 'valid.txt'), 'utf8')).toBe('Jane@mx.test\n');
  });

  it('refuses bad combinations and names with one line, exit 2, before anything is sent', async () => {
    const server = await startFaultServer({ apiKey: 'k' });
    try {
      const env = { MAILSIFT_API_KEY: 'k', MAILSIFT_BASE_URL: server.url };
      const input = file('users6.csv', USERS);
      // flags that do not fit together: test/cli/plan.test.ts; these need the input, or the disk
      const cases: [string[], RegExp][] = [
        [['--columns', 'email,status'], /"email" is for a text input/],
        // a file where the directory should be: known before the first request
        [['--split', input], /--split .*: cannot create the directory: a file is in the way/],
      ];
      for (const [flags, message] of cases) {
        const r = await runInProcess(['validate', input, ...flags], { env });
        expect(r.code, flags.join(' ')).toBe(2);
        expect(r.stderr).toMatch(message);
        expect(r.stderr.trim().split('\n')).toHaveLength(1);
        expect(r.stdout).toBe('');
      }
      expect(server.requests).toHaveLength(0);
    } finally {
      await server.close();
    }
  });
});
