import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { chooseColumns, describeChoice, isAddressHeader, looksHeaderless } from '../../src/read/column.js';
import { openInput } from '../../src/read/open-input.js';

describe('address column detection', () => {
  const sample = [
    ['1', 'Ann', 'ann@example.com', 'note@x'],
    ['2', 'Bob', 'bob@example.com', ''],
  ];
  it.each<[string, string[], string | undefined, number[]]>([
    ['a header named email', ['id', 'name', 'email', 'notes'], undefined, [2]],
    ['E-Mail, any case', ['id', 'name', 'E-Mail', 'notes'], undefined, [2]],
    ['email_address', ['id', 'name', 'EMAIL_ADDRESS', 'notes'], undefined, [2]],
    ['"Email Address"', ['id', 'name', 'Email Address', 'notes'], undefined, [2]],
    ['no such header: the column with most addresses', ['id', 'name', 'contact', 'notes'], undefined, [2]],
    ['--column by number', ['id', 'name', 'contact', 'notes'], '4', [3]],
    ['--column by name', ['id', 'name', 'contact', 'notes'], 'contact', [2]],
    ['--column by name, other case', ['id', 'name', 'contact', 'notes'], 'CONTACT', [2]],
    ['--column, several by number', ['id', 'name', 'contact', 'notes'], '3,4', [2, 3]],
    ['--column, several by name', ['id', 'name', 'contact', 'notes'], 'notes, contact', [3, 2]],
    ['--column, a name with a comma is found whole', ['id', 'name', 'Email, work', 'notes'], 'Email, work', [2]],
  ])('%s', (_name, header, requested, expected) => {
    expect(chooseColumns(header, sample, requested).columns).toEqual(expected);
  });

  it.each<[string, string[], string[][], string | undefined, RegExp]>([
    ['no address anywhere', ['a', 'b'], [['1', '2']], undefined, /no address column/],
    [
      'only @handles',
      ['name', 'twitter'],
      [
        ['Ann', '@ann'],
        ['Bob', '@bob'],
      ],
      undefined,
      /no address column/,
    ],
    ['--column 0', ['a', 'b'], [], '0', /has 2 column/],
    ['--column past the end', ['a', 'b'], [], '3', /has 2 column/],
    ['--column unknown name', ['a', 'b'], [], 'mail', /no such column/],
    ['--column, one name unknown', ['a', 'b'], [], 'a,c', /"c": no such column/],
    ['--column, a column twice', ['a', 'b'], [], '1,a', /column 1 is named twice/],
  ])('refuses %s', (_name, header, rows, requested, message) => {
    expect(() => chooseColumns(header, rows, requested)).toThrow(message);
  });

  // Headers as the services write them: each export's address column(s), and
  // the columns that carry "email" in their name without holding an address.
  it.each<[string, string[], number[]]>([
    [
      'Google Contacts',
      [
        'First Name',
        'Middle Name',
        'Last Name',
        'Labels',
        'E-mail 1 - Label',
        'E-mail 1 - Value',
        'E-mail 2 - Label',
        'E-mail 2 - Value',
        'Phone 1 - Label',
        'Phone 1 - Value',
      ],
      [5, 7],
    ],
    [
      'Google Contacts (older)',
      ['Name', 'Given Name', 'Group Membership', 'E-mail 1 - Type', 'E-mail 1 - Value', 'E-mail 2 - Type', 'E-mail 2 - Value'],
      [4, 6],
    ],
    ['Outlook', ['First Name', 'Last Name', 'E-mail Address', 'E-mail Type', 'E-mail Display Name', 'E-mail 2 Address', 'E-mail 3 Address'], [2, 5, 6]],
    ['Mailchimp', ['Email Address', 'First Name', 'Last Name', 'Address', 'Phone Number', 'MEMBER_RATING', 'OPTIN_TIME', 'TAGS'], [0]],
    [
      'Shopify customers',
      [
        'Customer ID',
        'First Name',
        'Last Name',
        'Email',
        'Accepts Email Marketing',
        'Default Address Company',
        'Default Address Address1',
        'Phone',
        'Accepts SMS Marketing',
        'Total Spent',
      ],
      [3],
    ],
    [
      'HubSpot',
      [
        'Record ID',
        'First Name',
        'Last Name',
        'Email',
        'Email Domain',
        'Additional email addresses',
        'Marketing emails opened',
        'Unsubscribed from all email',
        'Phone Number',
      ],
      [3, 5],
    ],
    ['a CRM', ['Name', 'Twitter', 'Work Email', 'Personal E-mail', 'Mailing Address'], [2, 3]],
    ['German Excel', ['Vorname', 'Nachname', 'E-Mail-Adresse', 'E-Mail (privat)', 'Telefon'], [2, 3]],
    ['French, Spanish, Dutch, Italian', ['Nom', 'Courriel', 'Correo electrónico', 'E-mailadres', 'Indirizzo email', 'Adresse e-mail'], [1, 2, 3, 4, 5]],
    // Outlook's export in the user's language: its three address columns, never their type or display name
    [
      'Outlook in French',
      ['Prénom', 'Adresse de messagerie', 'Type de messagerie', 'Nom complet de l’adresse de messagerie', 'Adresse de messagerie 2', 'Adresse de messagerie 3'],
      [1, 4, 5],
    ],
    [
      'Outlook in Italian',
      ['Nome', 'Indirizzo posta elettronica', 'Tipo posta elettronica', 'Nome visualizzato posta elettronica', 'Indirizzo posta elettronica 2'],
      [1, 4],
    ],
    [
      'Outlook in Czech, Slovak, Slovenian, Serbian',
      ['Jméno', 'E-mailová adresa', 'Typ e-mailu', 'E-mailová adresa 2', 'E-poštni naslov', 'E-poštno ime za prikaz', 'E-adresa 2'],
      [1, 3, 4, 6],
    ],
    [
      'Outlook in Lithuanian',
      ['Vardas', 'El. pašto adresas', 'El. pašto tipas', 'Rodomas el. pašto vardas', '2-as el. pašto adresas', '3-ias el. pašto adresas'],
      [1, 4, 5],
    ],
    [
      'Outlook in Bulgarian and Arabic',
      ['Име', 'Имейл адрес', 'Показвано име в имейл', 'Имейл адрес 2', 'عنوان البريد الإلكتروني', 'نوع البريد الإلكتروني', 'عنوان البريد الإلكتروني 2'],
      [1, 3, 4, 6],
    ],
    [
      'Outlook in Japanese, Korean, Chinese',
      [
        '名',
        '電子メール アドレス',
        '電子メール 2 アドレス',
        '電子メール表示名',
        '전자 메일 주소',
        '전자 메일 2 주소',
        '전자 메일 표시 이름',
        '电子邮件地址',
        '电子邮件 2 地址',
        '电子邮件显示名称',
        '電子郵件地址',
        '電子郵件 3 地址',
      ],
      [1, 2, 4, 5, 7, 8, 10, 11],
    ],
  ])('%s: the address columns are known by their headers', (_name, header, expected) => {
    expect(header.flatMap((h, i) => (isAddressHeader(h) ? [i] : []))).toEqual(expected);
  });

  it('a header that names an address column wins over a column of @handles, and the other address column is named', () => {
    const header = ['Name', 'Twitter', 'Work Email', 'Home Email'];
    const rows = Array.from({ length: 10 }, (_, i) => [`P${i}`, `@p${i}`, i % 5 === 0 ? '' : `p${i}@work.example`, i % 2 ? `p${i}@home.example` : '']);
    const choice = chooseColumns(header, rows);
    expect(choice).toEqual({ columns: [2], by: 'header', others: [3] });
    expect(describeChoice(header, choice)).toEqual([
      'checking column "Work Email" (3) for addresses (found by its name)',
      `column "Home Email" (4) holds addresses too, not checked; to check both: --column 'Work Email,Home Email'`,
    ]);
  });

  it.each<[string, string[], string | undefined, number]>([
    ['a column headed plainly email', ['name', 'email'], undefined, 0],
    ['a column --column names', ['name', 'contact'], 'contact', 0],
    ['a column headed Work Email', ['name', 'Work Email'], undefined, 1],
    ['a column found by its cells', ['name', 'contact'], undefined, 1],
    ['a column headed email, beside another address column', ['email', 'Work Email'], undefined, 2],
  ])('the notice as the run begins, for %s: %i line(s)', (_name, header, requested, lines) => {
    const rows = [
      ['ann@x.example', 'ann@y.example'],
      ['bob@x.example', 'bob@y.example'],
    ].map((r) => (header[0] === 'name' ? ['Ann', r[1]!] : r));
    expect(describeChoice(header, chooseColumns(header, rows, requested))).toHaveLength(lines);
  });

  it('of several named columns, the first that holds addresses in the first rows', () => {
    const choice = chooseColumns(
      ['Email', 'Work Email'],
      [
        ['', 'a@x.example'],
        ['', 'b@x.example'],
      ],
    );
    expect(choice.columns).toEqual([1]);
  });

  it.each<[string[], boolean]>([
    [['id', 'email'], false],
    [['1', 'ann@example.com'], true],
    [['email', 'ann@example.com'], false],
    [['Work Email', 'ann@example.com'], false],
  ])('first row %j is data: %s', (row, expected) => expect(looksHeaderless(row)).toBe(expected));

  it.each<[string, string | undefined]>([
    ['found', undefined],
    ['chosen by number', '2'],
  ])('a headerless CSV keeps its first row when the column is %s', async (_name, column) => {
    const stdin = Readable.from([Buffer.from('Bob,bob@example.com\nAnn,ann@example.com\n')]);
    const input = await openInput({ path: '-', stdin, column });
    const emails: string[] = [];
    for await (const rows of input.rows) emails.push(...rows.map((r) => r.email));
    expect(input.header).toEqual(['column1', 'email']);
    expect(emails).toEqual(['bob@example.com', 'ann@example.com']);
  });

  it('a headerless CSV with two columns asked for by number keeps its first row', async () => {
    const stdin = Readable.from([Buffer.from('bob@example.com,Bob,b2@example.com\nann@example.com,Ann,\n')]);
    const input = await openInput({ path: '-', stdin, column: '1,3' });
    const cells: (string[][] | undefined)[] = [];
    for await (const rows of input.rows) cells.push(...rows.map((r) => r.cells));
    expect(input.header).toEqual(['column1', 'column2', 'column3']);
    expect(cells).toEqual([
      [['bob@example.com'], ['b2@example.com']],
      [['ann@example.com'], []],
    ]);
  });
});
