import { UsageError } from '../errors.js';
import { printable } from '../format.js';
import { holdsAddress } from './cell-addresses.js';
import type { ColumnChoice } from './input-row.js';

export type { ColumnChoice, ColumnSource } from './input-row.js';

/**
 * What an address column is called, in the exports list cleaners bring
 * (Google Contacts `E-mail 1 - Value`, Outlook `E-mail 2 Address`, Mailchimp
 * `Email Address`, Shopify and HubSpot `Email`, HubSpot `Additional email
 * addresses`, a CRM's `Work Email`) and in the languages Excel users name
 * them in. Compared after `headerWords`: lower case, accents and punctuation
 * gone, numbers and the qualifiers below dropped. So `Accepts Email
 * Marketing`, `Email Domain`, `E-mail 1 - Type` and `E-mail Display Name`
 * are not address columns: a word outside the table is left in them.
 */
const ADDRESS_NAMES: ReadonlySet<string> = new Set([
  // English
  'email',
  'e mail',
  'mail',
  'emails',
  'e mails',
  'email address',
  'e mail address',
  'mail address',
  'email addresses',
  'e mail addresses',
  'email addr',
  'emailaddress',
  'emailaddr',
  // French
  'courriel',
  'adresse courriel',
  'adresse email',
  'adresse e mail',
  'adresse mail',
  'adresse electronique',
  'mel',
  // German
  'e mail adresse',
  'email adresse',
  'emailadresse',
  'e mailadresse',
  'mailadresse',
  // Spanish, Portuguese, Italian
  'correo',
  'correo electronico',
  'direccion de correo',
  'direccion de correo electronico',
  'direccion de email',
  'direccion de e mail',
  'email endereco',
  'endereco de email',
  'endereco de e mail',
  'correio eletronico',
  'endereco eletronico',
  'indirizzo email',
  'indirizzo e mail',
  'posta elettronica',
  'indirizzo di posta elettronica',
  // Dutch, Nordic, Finnish, Turkish, Polish
  'e mailadres',
  'emailadres',
  'e mail adres',
  'mailadres',
  'e post',
  'epost',
  'e postadresse',
  'epostadresse',
  'e post adresse',
  'e postadress',
  'epostadress',
  'sahkoposti',
  'sahkopostiosoite',
  'e posta',
  'eposta',
  'e posta adresi',
  'adres e mail',
  'adres email',
]);

/** Words that say whose or which address it is, not what the column holds. */
const QUALIFIERS: ReadonlySet<string> = new Set([
  'work',
  'home',
  'personal',
  'private',
  'business',
  'office',
  'company',
  'corporate',
  'primary',
  'main',
  'secondary',
  'other',
  'alternate',
  'alternative',
  'additional',
  'contact',
  'customer',
  'client',
  'user',
  'member',
  'subscriber',
  'billing',
  'your',
  'value',
  'principal',
  'principale',
  'professionnel',
  'professionnelle',
  'personnel',
  'personnelle',
  'privat',
  'privee',
  'prive',
  'geschaftlich',
  'dienstlich',
  'trabajo',
  'lavoro',
  'werk',
  'zakelijk',
]);

/**
 * The address columns of Outlook's contact export in its other languages, as
 * it spells them (Microsoft's own table of Outlook CSV headers, in Exchange's
 * contact import): its French and Italian users export these, not `E-mail
 * Address`, and each has a second and third such column. Spelled as Outlook
 * writes them and compared as headerWords has them, below.
 */
const OUTLOOK_NAMES = [
  'Adresse de messagerie',
  'Indirizzo posta elettronica',
  'E-mailová adresa',
  'E-poštni naslov',
  'E-adresa',
  'El. pašto adresas',
  '2-as el. pašto adresas',
  '3-ias el. pašto adresas',
  'Имейл адрес',
  'عنوان البريد الإلكتروني',
  '電子メール アドレス',
  '전자 메일 주소',
  '电子邮件地址',
  '电子邮件 2 地址',
  '電子郵件地址',
  '電子郵件 2 地址',
];

/** A header as words: `E-mail 1 - Value` → `e mail value` (numbers and qualifiers dropped). */
function headerWords(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/(\p{L})(\p{N})/gu, '$1 $2')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== '' && !/^\p{N}+$/u.test(w) && !QUALIFIERS.has(w))
    .join(' ');
}

const OUTLOOK_WORDS: ReadonlySet<string> = new Set(OUTLOOK_NAMES.map(headerWords));

/** Whether a header names an address column (see ADDRESS_NAMES and OUTLOOK_NAMES). */
export function isAddressHeader(name: string): boolean {
  const words = headerWords(name);
  return ADDRESS_NAMES.has(words) || OUTLOOK_WORDS.has(words);
}

/**
 * Which columns hold the address. `--column` wins (1-based numbers or header
 * names, comma-separated for several); else the first column whose header
 * names an address column (one that holds addresses in the first rows, if
 * any does) — a header wins over content, so a `Twitter` column of
 * `@handle`s never beats `Work Email`; else the column of the sample rows
 * with the most cells that hold an address (`@handle` is not one; first on a
 * tie).
 */
export function chooseColumns(header: readonly string[], sample: readonly (readonly string[])[], requested?: string): ColumnChoice {
  const counts = header.map((_, col) => {
    let n = 0;
    for (const row of sample) if (holdsAddress(row[col] ?? '')) n++;
    return n;
  });
  const filled = header.map((_, col) => sample.filter((row) => (row[col] ?? '').trim() !== '').length);
  const named = header.flatMap((name, col) => (isAddressHeader(name) ? [col] : []));
  /** a column most of whose cells hold an address (more than one: a note that quotes one address is no address column) */
  const holding = (col: number): boolean => counts[col]! >= Math.min(2, sample.length) && counts[col]! > 0 && counts[col]! * 2 >= filled[col]!;
  // a column named like one but empty in every sampled row (Outlook's E-mail 3 Address, nearly
  // always) is not said to hold addresses: the notice would be false, and its advice add empty groups
  const others = (chosen: readonly number[]): number[] =>
    header.flatMap((_, col) => (!chosen.includes(col) && ((named.includes(col) && counts[col]! > 0) || holding(col)) ? [col] : []));

  if (requested !== undefined) {
    const columns = requestedColumns(header, requested);
    return { columns, by: 'flag', others: others(columns) };
  }
  if (named.length > 0) {
    const col = named.find((c) => counts[c]! > 0) ?? named[0]!;
    return { columns: [col], by: 'header', others: others([col]) };
  }
  let best = -1;
  for (let col = 0; col < header.length; col++) if (counts[col]! > (best < 0 ? 0 : counts[best]!)) best = col;
  if (best < 0) {
    throw new UsageError(`no address column found (looked for a header like "email" and for cells holding an address); name it with --column`);
  }
  return { columns: [best], by: 'content', others: others([best]) };
}

/**
 * `--column` as given: one column by number or name, or several
 * comma-separated (`--column "E-mail 1 - Value,E-mail 2 - Value"`, `--column
 * 3,5`). A header that itself holds a comma is found whole first.
 */
function requestedColumns(header: readonly string[], requested: string): number[] {
  const whole = /^\d+$/.test(requested) ? undefined : findColumn(header, requested);
  if (whole !== undefined) return [whole];
  const parts = requested.split(',').map((p) => p.trim());
  if (parts.length === 1 || parts.some((p) => p === '')) return [requestedColumn(header, requested.trim())];
  const columns = parts.map((p) => requestedColumn(header, p));
  const twice = columns.find((c, i) => columns.indexOf(c) !== i);
  if (twice !== undefined) throw new UsageError(`--column ${requested}: column ${twice + 1} is named twice`);
  return columns;
}

function requestedColumn(header: readonly string[], requested: string): number {
  if (/^\d+$/.test(requested)) {
    const n = Number(requested);
    if (n < 1 || n > header.length) {
      throw new UsageError(`--column ${requested}: the input has ${header.length} column(s)`);
    }
    return n - 1;
  }
  const found = findColumn(header, requested);
  if (found !== undefined) return found;
  throw new UsageError(`--column "${requested}": no such column (columns: ${header.join(', ')})`);
}

/** A column by its header: exactly, else trimmed and in any case. */
function findColumn(header: readonly string[], name: string): number | undefined {
  const exact = header.indexOf(name);
  if (exact >= 0) return exact;
  const lower = name.trim().toLowerCase();
  const loose = header.findIndex((h) => h.trim().toLowerCase() === lower);
  return loose >= 0 ? loose : undefined;
}

/** Whether --column names columns by number only (which a headerless table can take). */
export function columnsByNumber(requested: string): boolean {
  return /^\d+(\s*,\s*\d+)*$/.test(requested.trim());
}

/**
 * A first row that holds an address is data, not a header: some exports have
 * none. We then name the columns ourselves.
 */
export function looksHeaderless(firstRow: readonly string[]): boolean {
  return firstRow.some((cell) => /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(cell.trim())) && !firstRow.some((cell) => isAddressHeader(cell));
}

/** A column as messages name it: `column "Work Email" (3)`, or `column 3` without a name. */
export function columnLabel(header: readonly string[], col: number): string {
  const name = header[col] ?? '';
  return name === '' ? `column ${col + 1}` : `column ${printable(JSON.stringify(name))} (${col + 1})`;
}

/** A header no one could take for anything but the address column: `email`, `E-mail`, `email_address`, `Email Address`. */
const PLAIN_EMAIL_HEADER = /^\s*e[-_ ]?mail([-_ ]?address)?\s*$/i;

/**
 * The notice lines, as the run begins, that say which column is checked and
 * how it was chosen, and which other columns hold addresses, with the
 * --column that checks them all. None when the choice speaks for itself — the
 * one column headed plainly `email`, or the column(s) --column named and no
 * other — so that a run's stderr is not a line longer for nothing: the
 * summary names the column in every case.
 */
export function describeChoice(header: readonly string[], choice: ColumnChoice): string[] {
  const { columns, by, others } = choice;
  const evident = by === 'flag' || (by === 'header' && PLAIN_EMAIL_HEADER.test(header[columns[0]!] ?? ''));
  if (evident && others.length === 0) return [];
  const how = by === 'header' ? 'found by its name' : by === 'content' ? 'found by its cells: no header names an address column' : 'as --column says';
  const lines = [`checking ${columns.map((c) => columnLabel(header, c)).join(', ')} for addresses (${how})`];
  if (others.length > 0) {
    const all = [...columns, ...others].sort((a, b) => a - b);
    lines.push(
      `${others.map((c) => columnLabel(header, c)).join(', ')} ${others.length === 1 ? 'holds' : 'hold'} addresses too, not checked; ` +
        `to check ${all.length === 2 ? 'both' : 'all'}: --column ${columnListArg(header, all)}`,
    );
  }
  return lines;
}

/** How to give these columns to --column: by name when every name finds its column, else by number. */
export function columnListArg(header: readonly string[], cols: readonly number[]): string {
  const usable = cols.every((i) => {
    const name = header[i] ?? '';
    return name !== '' && name !== `column${i + 1}` && !name.includes(',') && header.indexOf(name) === i && !/^\d+$/.test(name) && printable(name) === name;
  });
  return usable ? shellWord(cols.map((i) => header[i]!).join(',')) : cols.map((i) => i + 1).join(',');
}

/** A word the shell passes as it is, quoted only when it must be. */
export function shellWord(s: string): string {
  return /^[\w.@%+=:,/-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
