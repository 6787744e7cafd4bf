// The right column checked, on exports made the way their producers make
// them (the header rows below are those the services write): a CRM's Twitter
// handles beside Work Email, Google Contacts' E-mail N - Value columns and
// their `:::` cells, a sparse column named with --column, Shopify customers
// without an email, pasted name-addrs and mailto: links. The command in-process,
// against the test API, whose request log says what was paid for; output row
// N is input row N and every input cell comes out byte-identical.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { parseCsv } from '../support/run-cli.js';
import { runInProcess } from '../support/run-in-process.js';
import { readTable } from '../support/contacts.js';

const KEY = 'sk_test_columns_7c1e';
const dir = mkdtempSync(join(tmpdir(), 'mailsift-columns-'));
const file = (name: string, content: string): string => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

let api: FaultServer;
beforeAll(async () => {
  api = await startFaultServer({ apiKey: KEY });
});
afterAll(async () => {
  await api.close();
  rmSync(dir, { recursive: true, force: true });
});
const env = (): Record<string, string> => ({ MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: api.url });

/** What a run paid for: the addresses of its bulk requests, from the request log. */
async function paidFor(run: () => Promise<void>): Promise<string[]> {
  const before = api.requests.length;
  await run();
  return api.requests.slice(before).flatMap((r) => r.emails);
}

/** A CSV cell quoted the way Excel and the services write it: only when it must be. */
const cell = (s: string): string => (/[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
const csv = (rows: readonly (readonly string[])[]): string => rows.map((r) => r.map(cell).join(',')).join('\n') + '\n';

/** Output row N is input row N, and its input cells are the input's bytes: each output line starts with its input line. */
function rowForRow(input: string, output: string): void {
  const ins = input.trimEnd().split('\n');
  const outs = output.trimEnd().split('\n');
  expect(outs).toHaveLength(ins.length);
  ins.forEach((line, i) => expect(outs[i]!.startsWith(line + ','), `row ${i + 1}: ${outs[i]}`).toBe(true));
}

describe('the column checked is the one the header names (6)', () => {
  // A CRM export: a Twitter column of handles in every row, Work Email in four rows of five.
  const header = ['Full Name', 'Company', 'Twitter', 'Work Email', 'Phone'];
  const rows = Array.from({ length: 100 }, (_, i) => [
    `Person ${i}`,
    `Firm ${i % 7}, Inc.`,
    `@person${i}`,
    i % 5 === 4 ? '' : `person${i}@firm${i % 7}.example`,
    `+1 555 01${String(i).padStart(2, '0')}`,
  ]);
  const text = csv([header, ...rows]);

  it('Work Email is checked, not the handles: 80 addresses paid, none of them a handle, said on stderr and in the summary', async () => {
    const input = file('crm.csv', text);
    const summary = join(dir, 'crm-summary.json');
    let r!: Awaited<ReturnType<typeof runInProcess>>;
    const paid = await paidFor(async () => {
      r = await runInProcess(['validate', input, '--summary', summary], { env: env() });
    });
    expect(r.code).toBe(0);
    expect(paid.filter((a) => a.startsWith('@'))).toEqual([]);
    expect(paid.sort()).toEqual(
      rows
        .map((row) => row[3]!)
        .filter((a) => a !== '')
        .sort(),
    );
    expect(r.stderr).toContain('mailsift: checking column "Work Email" (4) for addresses (found by its name)\n');
    expect(r.stderr).toMatch(/ column {4}"Work Email" \(4\), found by its name\n/);
    expect(JSON.parse(readFileSync(summary, 'utf8')).columns).toEqual([{ name: 'Work Email', number: 4, by: 'header' }]);
    rowForRow(text, r.stdout);
    const out = parseCsv(r.stdout);
    expect(out.slice(1).map((row) => row[5])).toEqual(rows.map((row) => (row[3] === '' ? 'invalid' : 'valid')));
    expect(out.slice(1).map((row) => row[6])).toEqual(rows.map((row) => (row[3] === '' ? 'empty' : '')));
  });

  it('--dry-run names the column too, and sends nothing', async () => {
    const input = file('crm-dry.csv', text);
    const paid = await paidFor(async () => {
      const r = await runInProcess(['validate', input, '--dry-run'], { env: env() });
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/\n {2}column {5}"Work Email" \(4\), found by its name\n/);
      expect(r.stdout).toMatch(/\n {2}to send {4}80 addresses in 1 bulk request/);
      expect(r.stdout).toMatch(/\n {2}empty {6}20 rows have no address/);
    });
    expect(paid).toEqual([]);
  });

  it('a file of handles alone has no address column: exit 2, nothing paid', async () => {
    const input = file('handles.csv', csv([['Name', 'Twitter'], ...rows.slice(0, 20).map((row) => [row[0]!, row[2]!])]));
    const paid = await paidFor(async () => {
      const r = await runInProcess(['validate', input], { env: env() });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/no address column found/);
    });
    expect(paid).toEqual([]);
  });
});

describe('several address columns and cells that list several addresses (7)', () => {
  // Google Contacts' "Google CSV", as contacts.google.com exports it (header cut after the phone columns)
  const header = [
    'First Name',
    'Middle Name',
    'Last Name',
    'Phonetic First Name',
    'Phonetic Middle Name',
    'Phonetic Last Name',
    'Name Prefix',
    'Name Suffix',
    'Nickname',
    'File As',
    'Organization Name',
    'Organization Title',
    'Organization Department',
    'Birthday',
    'Notes',
    'Photo',
    'Labels',
    'E-mail 1 - Label',
    'E-mail 1 - Value',
    'E-mail 2 - Label',
    'E-mail 2 - Value',
    'Phone 1 - Label',
    'Phone 1 - Value',
  ];
  const contact = (first: string, last: string, e1: string, e2 = '', phone = ''): string[] => {
    const row = Array<string>(header.length).fill('');
    row[0] = first;
    row[2] = last;
    row[16] = '* myContacts';
    if (e1) [row[17], row[18]] = [e1.includes(':::') ? '* Home ::: Work' : '* Home', e1];
    if (e2) [row[19], row[20]] = ['Work', e2];
    if (phone) [row[21], row[22]] = ['Mobile', phone];
    return row;
  };
  const rows = [
    contact('Ann', 'Archer', 'ann@home.example ::: ann.archer@work.example', 'ann@firm.example', '+44 20 7946 0018'),
    contact('Bob', 'Baker', 'bob@home.example'),
    contact('Cy', 'Cole', 'cy@home.example ::: invalid.cy@old.example', '', '+1 555 0100'),
    contact('Dee', 'Dunn', '', ''),
    contact('Eve', 'Evans', 'eve@home.example', 'ann.archer@work.example'),
    contact('Fay', 'Ford', 'ann@home.example', 'risky.fay@firm.example'),
  ];
  const text = csv([header, ...rows]);
  const distinct = [
    'ann@home.example',
    'ann.archer@work.example',
    'ann@firm.example',
    'bob@home.example',
    'cy@home.example',
    'invalid.cy@old.example',
    'eve@home.example',
    'risky.fay@firm.example',
  ];

  it('by default E-mail 1 - Value is checked, each address of a ::: cell once, and a notice names E-mail 2 - Value', async () => {
    const input = file('google.csv', text);
    let r!: Awaited<ReturnType<typeof runInProcess>>;
    const paid = await paidFor(async () => {
      r = await runInProcess(['validate', input, '--columns', 'status,reason'], { env: env() });
    });
    expect(r.code).toBe(0);
    expect(paid.sort()).toEqual(
      ['ann@home.example', 'ann.archer@work.example', 'bob@home.example', 'cy@home.example', 'invalid.cy@old.example', 'eve@home.example'].sort(),
    );
    expect(r.stderr).toContain('mailsift: checking column "E-mail 1 - Value" (19) for addresses (found by its name)\n');
    expect(r.stderr).toContain(
      `mailsift: column "E-mail 2 - Value" (21) holds addresses too, not checked; to check both: --column 'E-mail 1 - Value,E-mail 2 - Value'\n`,
    );
    rowForRow(text, r.stdout);
    // one real problem (Cy's old address), one contact without an address: not "invalid 60%"
    expect(
      parseCsv(r.stdout)
        .slice(1)
        .map((row) => row.slice(-2)),
    ).toEqual([
      ['valid', ''],
      ['valid', ''],
      ['invalid', 'no_mail_server'],
      ['invalid', 'empty'],
      ['valid', ''],
      ['valid', ''],
    ]);
  });

  it('--column names both: verdict columns for each, every address paid once across rows and columns', async () => {
    const input = file('google-both.csv', text);
    let r!: Awaited<ReturnType<typeof runInProcess>>;
    const paid = await paidFor(async () => {
      r = await runInProcess(['validate', input, '--column', 'E-mail 1 - Value,E-mail 2 - Value', '--columns', 'status,reason,domain', '-q'], { env: env() });
    });
    expect(r.code).toBe(0);
    expect(paid.sort()).toEqual([...distinct].sort());
    rowForRow(text, r.stdout);
    const out = parseCsv(r.stdout);
    expect(out[0]!.slice(header.length)).toEqual([
      'E-mail 1 - Value status',
      'E-mail 1 - Value reason',
      'E-mail 1 - Value domain',
      'E-mail 2 - Value status',
      'E-mail 2 - Value reason',
      'E-mail 2 - Value domain',
    ]);
    expect(out.slice(1).map((row) => row.slice(header.length))).toEqual([
      ['valid', '', 'home.example', 'valid', '', 'firm.example'],
      ['valid', '', 'home.example', 'invalid', 'empty', ''],
      // the worst address of the cell decides, with its reason and details
      ['invalid', 'no_mail_server', 'old.example', 'invalid', 'empty', ''],
      ['invalid', 'empty', '', 'invalid', 'empty', ''],
      ['valid', '', 'home.example', 'valid', '', 'work.example'],
      ['valid', '', 'home.example', 'risky', 'role', 'firm.example'],
    ]);
    // the same by numbers, as NDJSON: each column's result, each address's verdict for a cell that lists several
    const nd = await runInProcess(['validate', input, '--column', '19,21', '--format', 'ndjson', '-q'], { env: env() });
    expect(nd.code).toBe(0);
    const results = nd.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(results).toHaveLength(rows.length);
    expect(results.map((x) => [x.status, x.reason])).toEqual([
      ['valid', ''],
      ['valid', ''],
      ['invalid', 'no_mail_server'],
      ['invalid', 'empty'],
      ['valid', ''],
      ['risky', 'role'],
    ]);
    const cy = results[2].columns['E-mail 1 - Value'];
    expect(cy.cell).toBe('cy@home.example ::: invalid.cy@old.example');
    expect(cy.addresses.map((a: { email: string; status: string }) => [a.email, a.status])).toEqual([
      ['cy@home.example', 'valid'],
      ['invalid.cy@old.example', 'invalid'],
    ]);
    expect(results[1].columns['E-mail 2 - Value']).toMatchObject({ email: '', status: 'invalid', reason: 'empty' });
    expect(Object.keys(results[0].input)).not.toContain('E-mail 1 - Value');
    expect(results[0].input['E-mail 1 - Label']).toBe('* Home ::: Work');

    // an .xlsx output has the same groups, row for row
    const xlsx = join(dir, 'google-both.xlsx');
    const book = await runInProcess(['validate', input, '--column', '19,21', '--columns', 'status,reason', '-o', xlsx, '-q'], { env: env() });
    expect(book.code).toBe(0);
    const sheet = await readTable(xlsx);
    expect(sheet[0]!.slice(header.length)).toEqual([
      'E-mail 1 - Value status',
      'E-mail 1 - Value reason',
      'E-mail 2 - Value status',
      'E-mail 2 - Value reason',
    ]);
    expect(sheet.slice(1).map((row) => row.slice(0, header.length))).toEqual(rows);
    expect(sheet[3]!.slice(header.length)).toEqual(['invalid', 'no_mail_server', 'invalid', 'empty']);
  });
});

describe("Outlook's export in the user's language (6, 7)", () => {
  // French Outlook writes its 92 columns in French, every field quoted, in Windows-1252
  const header = [
    'Prénom',
    'Nom',
    'Société',
    'Adresse de messagerie',
    'Type de messagerie',
    'Nom complet de l’adresse de messagerie',
    'Adresse de messagerie 2',
    'Type de messagerie 2',
    'Nom complet de l’adresse de messagerie 2',
    'Notes',
    'Sexe',
  ];
  const contact = (first: string, last: string, e1: string, e2 = ''): string[] => [
    first,
    last,
    '',
    e1,
    e1 ? 'SMTP' : '',
    e1 ? `${first} ${last} (${e1})` : '',
    e2,
    e2 ? 'SMTP' : '',
    e2 ? `${first} ${last} (${e2})` : '',
    '',
    'Non spécifié',
  ];
  const rows = [
    contact('Amélie', 'Dupré', 'amelie@dupre.example', 'a.dupre@perso.example'),
    contact('Éric', 'Noël', ''),
    contact('Hélène', 'Gâté', 'invalid.helene@gate.example'),
  ];
  const text = [header, ...rows].map((r) => r.map((c) => `"${c}"`).join(',')).join('\r\n') + '\r\n';

  it('the address column is found by its name, and the second one is named in a notice', async () => {
    const input = join(dir, 'outlook-fr.csv');
    writeFileSync(input, iconv.encode(text, 'windows-1252'));
    let r!: Awaited<ReturnType<typeof runInProcess>>;
    const paid = await paidFor(async () => {
      r = await runInProcess(['validate', input, '--encoding', 'windows-1252', '--columns', 'status'], { env: env() });
    });
    expect(r.code, r.stderr).toBe(0);
    expect(paid.sort()).toEqual(['amelie@dupre.example', 'invalid.helene@gate.example']);
    expect(r.stderr).toContain('mailsift: checking column "Adresse de messagerie" (4) for addresses (found by its name)\n');
    expect(r.stderr).toContain(
      `mailsift: column "Adresse de messagerie 2" (7) holds addresses too, not checked; to check both: --column 'Adresse de messagerie,Adresse de messagerie 2'\n`,
    );
  });
});

describe('a column headed like an address column but empty is not said to hold addresses (7)', () => {
  // Outlook writes E-mail 2 Address and E-mail 3 Address for every contact, empty for most
  const header = [
    'First Name',
    'Last Name',
    'E-mail Address',
    'E-mail Type',
    'E-mail Display Name',
    'E-mail 2 Address',
    'E-mail 2 Type',
    'E-mail 3 Address',
    'E-mail 3 Type',
  ];
  const rows = [
    ['Jürgen', 'Weiß', 'jw@weiss.example', 'SMTP', 'Jürgen Weiß (jw@weiss.example)', 'juergen@home.example', 'SMTP', '', ''],
    ['Nina', 'Noemail', '', '', '', '', '', '', ''],
    ['Olaf', 'Ørsted', 'olaf@orsted.example', 'SMTP', 'Olaf Ørsted (olaf@orsted.example)', '', '', '', ''],
  ];

  it('the notice names E-mail 2 Address, which holds one, and not E-mail 3 Address, empty in every row', async () => {
    const input = file('outlook-empty-third.csv', csv([header, ...rows]));
    const r = await runInProcess(['validate', input, '--columns', 'status'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      `mailsift: column "E-mail 2 Address" (6) holds addresses too, not checked; to check both: --column 'E-mail Address,E-mail 2 Address'\n`,
    );
    expect(r.stderr).not.toContain('"E-mail 3 Address"');
  });
});

describe('a column named with --column is checked however sparse (8)', () => {
  // A HubSpot export where few contacts have an email: 84 in 1,000, the rest "n/a" or empty.
  const header = ['Record ID', 'First Name', 'Last Name', 'Email', 'Phone Number', 'Lifecycle Stage'];
  const rows = Array.from({ length: 1000 }, (_, i) => [
    String(5_000_000 + i),
    `First${i}`,
    `Last${i}`,
    i % 11 === 4 && i < 84 * 11 ? `contact${i}@client${i % 9}.example` : i % 10 === 3 ? '' : 'n/a',
    '',
    'lead',
  ]);
  const addresses = rows.map((r) => r[3]!).filter((a) => a.includes('@'));
  const text = csv([header, ...rows]);

  it('--column Email: every row checked, exit 0, the 84 addresses paid and nothing else', async () => {
    expect(addresses).toHaveLength(84);
    const input = file('hubspot.csv', text);
    let r!: Awaited<ReturnType<typeof runInProcess>>;
    const paid = await paidFor(async () => {
      r = await runInProcess(['validate', input, '--column', 'Email', '-q'], { env: env() });
    });
    expect(r.code).toBe(0);
    expect(paid.sort()).toEqual([...addresses].sort());
    rowForRow(text, r.stdout);
    const statuses = parseCsv(r.stdout)
      .slice(1)
      .map((row) => `${row[6]}/${row[7]}`);
    expect(statuses).toEqual(rows.map((row) => (row[3]!.includes('@') ? 'valid/' : row[3] === '' ? 'invalid/empty' : 'invalid/syntax')));
  });

  it('found by its name alone, the same column stops the run before any request and says how to check it anyway', async () => {
    const input = file('hubspot-found.csv', text);
    const paid = await paidFor(async () => {
      const r = await runInProcess(['validate', input], { env: env() });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('(--column Email checks it as it is)');
      expect(r.stdout).toBe('');
    });
    expect(paid).toEqual([]);
  });
});

describe('an empty cell is its own reason, left out of --fail-on shares (9)', () => {
  // A Shopify customers export: a quarter of the customers have no email (they bought by phone).
  const header = [
    'Customer ID',
    'First Name',
    'Last Name',
    'Email',
    'Accepts Email Marketing',
    'Default Address Company',
    'Default Address Address1',
    'Default Address Address2',
    'Default Address City',
    'Default Address Province Code',
    'Default Address Country Code',
    'Default Address Zip',
    'Default Address Phone',
    'Phone',
    'Accepts SMS Marketing',
    'Total Spent',
    'Total Orders',
    'Note',
    'Tax Exempt',
    'Tags',
  ];
  const rows = Array.from({ length: 200 }, (_, i) => [
    String(7_400_000_000_000 + i),
    `Buyer${i}`,
    `Shop${i}`,
    i % 4 === 1 ? '' : i === 10 || i === 22 || i === 30 ? `invalid.buyer${i}@shop.example` : `buyer${i}@shop.example`,
    i % 3 ? 'yes' : 'no',
    '',
    `${i} Main St`,
    '',
    'Springfield',
    'IL',
    'US',
    `'0${6200 + i}`,
    '',
    `+1217555${String(1000 + i)}`,
    'no',
    (i * 3.5).toFixed(2),
    String(i % 4),
    '',
    'no',
    i % 2 ? 'vip, newsletter' : '',
  ]);
  const text = csv([header, ...rows]);

  it("3 bad addresses in 150 pass --fail-on 'invalid>5%' although 50 customers have no email; empty counted apart", async () => {
    const input = file('shopify.csv', text);
    const summaryPath = join(dir, 'shopify-summary.json');
    const report = join(dir, 'shopify-report.html');
    let r!: Awaited<ReturnType<typeof runInProcess>>;
    const paid = await paidFor(async () => {
      r = await runInProcess(['validate', input, '--fail-on', 'invalid>5%', '--summary', summaryPath, '--report', report], { env: env() });
    });
    expect(r.code).toBe(0);
    expect(paid).toHaveLength(150);
    rowForRow(text, r.stdout);
    const summary = JSON.parse(readFileSync(summaryPath, 'utf8'));
    expect(summary).toMatchObject({ total: 200, invalid: 53, empty: 50, prechecked: 0, reasons: { no_mail_server: 3, empty: 50 } });
    expect(r.stderr).toMatch(/\n {2}empty {5}50 rows have no address \(reason empty\), left out of --fail-on shares\n/);
    expect(readFileSync(report, 'utf8')).toMatch(/<dt>Empty address cells<\/dt><dd data-figure="empty">50<\/dd>/);
    const reasons = parseCsv(r.stdout)
      .slice(1)
      .map((row) => row[header.length + 1]);
    expect(reasons.filter((x) => x === 'empty')).toHaveLength(50);

    // the share is of the rows with an address; the empty rows have a rule of their own
    const strict = await runInProcess(['validate', input, '--fail-on', 'invalid>1%,empty>20%', '-q'], { env: env() });
    expect(strict.code).toBe(5);
    expect(strict.stderr).toContain('mailsift: --fail-on invalid>1% holds: invalid is 2.0% (3 of 150 rows with an address)\n');
    expect(strict.stderr).toContain('mailsift: --fail-on empty>20% holds: empty is 25.0% (50 of 200 rows)\n');
  });
});

describe('pasted addresses are checked by the address inside (10)', () => {
  // A Mailchimp audience export whose addresses were pasted from mail clients and web pages
  const header = ['Email Address', 'First Name', 'Last Name', 'Address', 'Phone Number', 'MEMBER_RATING', 'OPTIN_TIME', 'TAGS'];
  const pasted = [
    'Jane Doe <jane@news.example>',
    '"Doe, John" <john@news.example>',
    'mailto:max@news.example',
    'mailto:mia%40news.example?subject=Hello%20there&body=Hi',
    '<invalid.old@news.example>',
    'plain@news.example',
  ];
  const rows = pasted.map((a, i) => [a, `F${i}`, `L${i}`, '', '', '2', '2024-03-01 10:00:00', '"Customers"']);
  const text = csv([header, ...rows]);

  it('each cell is checked by its address (what the API was sent) and comes out as it was', async () => {
    const input = file('mailchimp.csv', text);
    let r!: Awaited<ReturnType<typeof runInProcess>>;
    const paid = await paidFor(async () => {
      r = await runInProcess(['validate', input, '-q'], { env: env() });
    });
    expect(r.code).toBe(0);
    expect(paid.sort()).toEqual(
      ['jane@news.example', 'john@news.example', 'max@news.example', 'mia@news.example', 'invalid.old@news.example', 'plain@news.example'].sort(),
    );
    rowForRow(text, r.stdout);
    const out = parseCsv(r.stdout).slice(1);
    expect(out.map((row) => row[0])).toEqual(pasted);
    expect(out.map((row) => row[header.length])).toEqual(['valid', 'valid', 'valid', 'valid', 'invalid', 'valid']);
    // JSON keeps the cell as it was beside the address checked
    const json = await runInProcess(['validate', input, '--format', 'json', '-q'], { env: env() });
    const results = JSON.parse(json.stdout).results;
    expect(results[1]).toMatchObject({ email: 'john@news.example', cell: '"Doe, John" <john@news.example>', status: 'valid' });
    expect(results[5].cell).toBeUndefined();
  });

  it('a text list of pasted addresses too', async () => {
    const paid = await paidFor(async () => {
      const r = await runInProcess(['validate', '--format', 'txt', '-q'], { env: env(), stdin: 'Ann <ann@list.example>\nmailto:bo@list.example\n' });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('ann@list.example\nbo@list.example\n');
    });
    expect(paid.sort()).toEqual(['ann@list.example', 'bo@list.example']);
  });
});
