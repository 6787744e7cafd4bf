import { mkdtempSync, readFileSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REASONS } from '../../src/reason.js';
import { DEFAULT_ZONES, startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { parseCsv } from '../support/run-cli.js';
import { runInProcess } from '../support/run-in-process.js';

// What a list cleaner walks away with, run in-process: a reason on
// every row of every format, the filters, and the runs that must fail loudly
// before anything is sent. The offline engine runs against a loopback DNS
// server; the API engine against the fault server.
const dir = mkdtempSync(join(tmpdir(), 'mailsift-clean-'));
const file = (name: string, content: string | Buffer): string => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
let dns: TestDnsServer;
let api: FaultServer;
beforeAll(async () => {
  const mx = { mx: [{ exchange: 'mail.mx.test', priority: 10 }] };
  dns = await startDnsServer({ zones: { ...DEFAULT_ZONES, 'gmial.com': mx, 'mailinator.com': mx } });
  api = await startFaultServer({});
});
afterAll(async () => {
  await dns.close();
  await api.close();
});
/** the offline engine, by its alias, against the loopback resolver; no stored key is ever found */
const offline = () => ['--engine', 'offline', '--dns-server', dns.address, '--dns-timeout', '300'];
const noKey = { XDG_CONFIG_HOME: join(dir, 'no-config') };

// One row per reason the offline engine can give without SMTP, a duplicate, and cells that must survive as read.
const LIST =
  'id,name,email,phone\n' +
  '1,"Doe, Jane",Jane@mx.test,+1 555 0100\n' +
  '2,Bob,not an address,\n' +
  '3,Ops,admin@mx.test, =1+2 \n' +
  '4,Zed,zed@servfail.test,\n' +
  '5,Tmp,tmp@mailinator.com,\n' +
  '6,Ann,ann@gmial.com,\n' +
  '7,Nul,x@nullmx.test,\n' +
  '8,Nx,x@nowhere.test,\n' +
  '9,Jane again,Jane@MX.test,\n' +
  '10,Empty,,\n';
const EXPECTED = [
  ['valid', ''],
  ['invalid', 'syntax'],
  ['risky', 'role'],
  ['unknown', 'dns_error'],
  ['risky', 'disposable'],
  ['risky', 'typo'],
  ['invalid', 'no_mail_server'],
  ['invalid', 'domain_not_found'],
  ['valid', ''],
  ['invalid', 'empty'],
];

describe('a reason on every row', () => {
  it('CSV (with --bom) has reason right after status, and the summary counts reasons over every row', async () => {
    const out = join(dir, 'out.csv');
    const summary = join(dir, 'summary.json');
    const r = await runInProcess(['validate', file('list.csv', LIST), ...offline(), '-o', out, '--bom', '--summary', summary], { env: noKey });
    expect(r.code).toBe(0);
    // stderr is not a terminal: the notice-free run prints its summary, and no spinner byte
    expect(r.stderr).not.toMatch(/[\r\x1b]/);
    expect(r.stderr).toMatch(/reasons +syntax 1 · domain_not_found 1 · no_mail_server 1 · empty 1 · disposable 1 · typo 1 · role 1 · dns_error 1/);
    const bytes = readFileSync(out, 'utf8');
    expect(bytes.startsWith('\ufeffid,name,email,phone,status,reason,is_valid,')).toBe(true);
    const rows = parseCsv(bytes.slice(1));
    expect(rows.slice(1).map((row) => [row[4], row[5]])).toEqual(EXPECTED);
    expect(rows[3]![3]).toBe(' =1+2 '); // input cells as read
    const s = JSON.parse(readFileSync(summary, 'utf8'));
    expect(s.engine).toBe('local');
    expect(s.reasons).toEqual({ syntax: 1, domain_not_found: 1, no_mail_server: 1, empty: 1, disposable: 1, typo: 1, role: 1, dns_error: 1 });
    expect([s.empty, s.prechecked]).toEqual([1, 1]);
  });

  it("JSON and NDJSON carry reason and the row's other cells under input; .xlsx has the column; --unique keeps first rows", async () => {
    const input = file('list2.csv', LIST);
    const json = await runInProcess(['validate', input, ...offline(), '--format', 'json', '-q'], { env: noKey });
    expect(json.code).toBe(0);
    const { results, summary } = JSON.parse(json.stdout);
    expect(results.map((x: { status: string; reason: string }) => [x.status, x.reason])).toEqual(EXPECTED);
    expect(results[0].input).toEqual({ id: '1', name: 'Doe, Jane', phone: '+1 555 0100' });
    expect(results[2].input).toEqual({ id: '3', name: 'Ops', phone: ' =1+2 ' });
    expect([summary.reasons.syntax, summary.reasons.empty]).toEqual([1, 1]);

    const nd = await runInProcess(['validate', input, ...offline(), '--format', 'ndjson', '--unique', '--summary', join(dir, 'u.json'), '-q'], {
      env: noKey,
    });
    expect(nd.code).toBe(0);
    const lines = nd.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    // Jane@MX.test (row 9) is Jane@mx.test's duplicate (the domain compares case-insensitively)
    expect(lines.map((l) => l.input.id)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '10']);
    const u = JSON.parse(readFileSync(join(dir, 'u.json'), 'utf8'));
    expect([u.total, u.written, u.duplicatesRemoved]).toEqual([10, 9, 1]);

    const xlsx = join(dir, 'out.xlsx');
    expect((await runInProcess(['validate', input, ...offline(), '-o', xlsx, '-q'], { env: noKey })).code).toBe(0);
    const book = new ExcelJS.Workbook();
    await book.xlsx.readFile(xlsx);
    const sheet = book.worksheets[0]!;
    const cells = (n: number) => (sheet.getRow(n).values as unknown[]).slice(1);
    expect(cells(1).slice(4, 6)).toEqual(['status', 'reason']);
    for (let n = 2; n <= 11; n++) {
      const [status, reason] = cells(n).slice(4, 6) as [string, string | null];
      expect([status, reason ?? '']).toEqual(EXPECTED[n - 2]);
    }
    for (const [, reason] of EXPECTED) if (reason) expect(REASONS).toContain(reason);
  });

  it('--only and --except take statuses and reasons; the list-cleaning recipe; --no-dns; a bad token is exit 2', async () => {
    const input = file('list3.csv', LIST);
    const clean = await runInProcess(['validate', input, ...offline(), '--only', 'valid,risky', '--except', 'disposable,typo,mailbox_full', '-q'], {
      env: noKey,
    });
    expect(clean.code).toBe(0);
    expect(
      parseCsv(clean.stdout)
        .slice(1)
        .map((row) => row[2]),
    ).toEqual(['Jane@mx.test', 'admin@mx.test', 'Jane@MX.test']);
    const byReason = await runInProcess(['validate', input, ...offline(), '--only', 'syntax,empty,dns_error', '-q'], { env: noKey });
    expect(
      parseCsv(byReason.stdout)
        .slice(1)
        .map((row) => row[0]),
    ).toEqual(['2', '4', '10']);

    const asked = dns.queries.length;
    const nodns = await runInProcess(['validate', input, ...offline(), '--no-dns', '--format', 'ndjson', '-q'], { env: noKey });
    expect(nodns.code).toBe(0);
    expect(dns.queries.length).toBe(asked);
    const statuses = nodns.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).status);
    expect(statuses).toEqual(['valid', 'invalid', 'risky', 'valid', 'risky', 'risky', 'valid', 'valid', 'valid', 'invalid']);

    const bad = await runInProcess(['validate', input, ...offline(), '--except', 'disposible'], { env: noKey });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/"disposible" is neither a status \(valid, invalid, risky, unknown\) nor a reason \(syntax, .*disposable/);
  });
});

describe('loud where it used to be silent', () => {
  const sent = () => api.requests.length;

  it('a column or a sheet without addresses stops before any request, naming the one that holds them', async () => {
    const env = { MAILSIFT_API_KEY: 'test-key', MAILSIFT_BASE_URL: api.url };
    const before = sent();
    // the header names an address column the export left unfilled: found, then refused, naming the column that holds them
    const col = await runInProcess(['validate', file('people.csv', 'name,Email,contact\nAnn,n/a,ann@example.com\nBob,n/a,bob@example.com\n')], { env });
    expect(col.code).toBe(2);
    expect(col.stderr.trim().split('\n').at(-1)).toBe('mailsift: column "Email" holds no addresses; column "contact" does: use --column contact');
    expect(col.stdout).toBe('');

    const book = new ExcelJS.Workbook();
    book.addWorksheet('Notes').addRows([['note'], ['call back on Monday'], ['ask for a quote']]);
    book.addWorksheet('Leads').addRows([
      ['name', 'mail'],
      ['Ann', 'ann@example.com'],
    ]);
    const xlsx = join(dir, 'book.xlsx');
    await book.xlsx.writeFile(xlsx);
    const sheet = await runInProcess(['validate', xlsx], { env });
    expect(sheet.code).toBe(2);
    expect(sheet.stderr.trim()).toBe('mailsift: sheet "Notes" holds no addresses; sheet "Leads" does: use --sheet Leads');
    expect(sent()).toBe(before);
    const right = await runInProcess(['validate', xlsx, '--sheet', 'Leads', '-q'], { env });
    expect(right.code).toBe(0);
    expect(parseCsv(right.stdout)[1]!.slice(0, 4)).toEqual(['Ann', 'ann@example.com', 'valid', '']);
  });

  it('a cron job without its key: exit 3 when the API is configured, the offline notice when nothing is', async () => {
    const input = file('cron.txt', 'a@example.com\n');
    const before = sent();
    const configured = await runInProcess(['validate', input], { env: { ...noKey, MAILSIFT_BASE_URL: api.url } });
    expect(configured.code).toBe(3);
    expect(configured.stderr.trim().split('\n')).toEqual([
      'mailsift: no API key (MAILSIFT_BASE_URL is set): set MAILSIFT_API_KEY, pass --api-key-file FILE or run "mailsift login" (or use --engine local)',
    ]);
    expect(configured.stdout).toBe('');
    expect(sent()).toBe(before);
    const summary = join(dir, 'cron-summary.json');
    const nothing = await runInProcess(['validate', input, '--no-dns', '--summary', summary], { env: noKey });
    expect(nothing.code).toBe(0);
    expect(nothing.stderr).toMatch(/^mailsift: no API key configured .*: using the offline engine$/m);
    expect(JSON.parse(readFileSync(summary, 'utf8')).engine).toBe('local');
  });

  it('mailsift login stores the key (mode 600) from stdin, found after --api-key-file and MAILSIFT_API_KEY; logout removes it', async () => {
    const config = join(dir, 'config');
    const env = { XDG_CONFIG_HOME: config };
    const key = 'test-key'; // the one the fault server takes
    const login = await runInProcess(['login', '--force'], { env, stdin: `${key}\n` }); // short: not what a real key looks like
    expect(login.code).toBe(0);
    const path = join(config, 'mailsift', 'credentials');
    expect(login.stderr).toBe(`mailsift: API key stored in ${path}\n`);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, 'utf8')).toBe(`${key}\n`);

    const input = file('login.txt', 'a@example.com\n');
    const auth = () => api.requests.at(-1)!.authorization;
    const stored = await runInProcess(['validate', input, '-q'], { env: { ...env, MAILSIFT_BASE_URL: api.url } });
    expect(stored.code).toBe(0);
    expect(auth()).toBe(`Bearer ${key}`);
    expect(stored.stdout + stored.stderr).not.toContain(key);
    // the others come first (the server refuses them: exit 3, and still no key in what is printed)
    const fromEnv = await runInProcess(['validate', input, '-q'], { env: { ...env, MAILSIFT_BASE_URL: api.url, MAILSIFT_API_KEY: 'env-key-77' } });
    expect(auth()).toBe('Bearer env-key-77');
    expect(fromEnv.stdout + fromEnv.stderr).not.toContain('env-key-77');
    await runInProcess(['validate', input, '-q', '--api-key-file', file('key.txt', 'file-key-88\n')], {
      env: { ...env, MAILSIFT_BASE_URL: api.url, MAILSIFT_API_KEY: 'env-key-77' },
    });
    expect(auth()).toBe('Bearer file-key-88');

    const logout = await runInProcess(['logout'], { env });
    expect(logout.code).toBe(0);
    expect(existsSync(path)).toBe(false);
    expect((await runInProcess(['validate', input], { env: { ...env, MAILSIFT_BASE_URL: api.url } })).code).toBe(3);
    expect((await runInProcess(['login'], { env, stdin: 'two keys\n' })).code).toBe(2);
  });

  it('-o with an extension mailsift does not write is exit 2 unless --format says what to write', async () => {
    const input = file('ext.txt', 'a@example.com\n');
    for (const name of ['out.xls', 'out.docx']) {
      const r = await runInProcess(['validate', input, '--no-dns', '-o', join(dir, name)], { env: noKey });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`^mailsift: -o .*${name.replace('.', '\\.')}: mailsift does not write \\.\\w+ files`, 'm'));
      expect(existsSync(join(dir, name))).toBe(false);
    }
    const said = await runInProcess(['validate', input, '--no-dns', '-q', '-o', join(dir, 'out.dat'), '--format', 'csv'], { env: noKey });
    expect(said.code).toBe(0);
    expect(readFileSync(join(dir, 'out.dat'), 'utf8')).toMatch(/^email,status,reason,/);
  });
});
