/**
 * A number cell as the text a user sees in it: a workbook stores numbers bare
 * (a zip code 01234 as 1234, a date as 45322) and keeps how to show them in
 * the cell's number format. Dates and times come out as ISO 8601 (locale-free);
 * integer and decimal patterns (`00000`, `000-00-0000`, `#,##0.00`, `0%`) as
 * Excel renders them, an empty section (`0;-0;;@`, `;;;`) hiding the numbers
 * it is for; anything else (fractions, scientific, conditions) as Excel's
 * General format does, with every digit kept. A text cell goes through the
 * format's text section when it has one (`;;;` hides it, `"x"@` adds to it).
 */
export type NumberFormat = (
  | { kind: 'general' }
  /** `elapsed`: a duration (`[h]:mm`), its hours counted past a day and its sign kept; else a time of day */
  | { kind: 'date'; date: boolean; time: boolean; elapsed?: boolean }
  | { kind: 'pattern'; positive: Section; negative?: Section; zero?: Section }
) & { text?: TextSection };

/** What a text cell shows: the pieces around its text (`undefined` stands for the text itself); none at all hides it. */
type TextSection = (string | undefined)[];

interface Section {
  tokens: Token[];
  /** ×100 per `%` */
  percent: number;
  /** ÷1000 per `,` after the last digit */
  scale: number;
  /** a `,` between digits: group thousands */
  group: boolean;
}
type Token = { literal: string } | { digit: '0' | '#' | '?'; fraction: boolean } | { point: true };

const GENERAL: NumberFormat = { kind: 'general' };

/** Excel's built-in formats by id (those a file refers to without spelling them out). */
const BUILTIN: Record<number, string> = {
  1: '0',
  2: '0.00',
  3: '#,##0',
  4: '#,##0.00',
  9: '0%',
  10: '0.00%',
  14: 'yyyy-mm-dd',
  15: 'd-mmm-yy',
  16: 'd-mmm',
  17: 'mmm-yy',
  18: 'h:mm AM/PM',
  19: 'h:mm:ss AM/PM',
  20: 'h:mm',
  21: 'h:mm:ss',
  22: 'm/d/yy h:mm',
  // 37–40 pad a positive with a space where a negative has its ")" (`_)` in Excel's spelling)
  37: '#,##0 ;(#,##0)',
  38: '#,##0 ;(#,##0)',
  39: '#,##0.00 ;(#,##0.00)',
  40: '#,##0.00 ;(#,##0.00)',
  45: 'mm:ss',
  46: '[h]:mm:ss',
  47: 'mmss.0',
};
/** Locale-dependent built-in date formats (East Asian Excel). */
const isBuiltinDate = (id: number): boolean => (id >= 27 && id <= 36) || (id >= 50 && id <= 58);

export function builtinFormat(id: number): NumberFormat {
  if (isBuiltinDate(id)) return { kind: 'date', date: true, time: false };
  const code = BUILTIN[id];
  return code === undefined ? GENERAL : compileFormat(code);
}

export function compileFormat(code: string): NumberFormat {
  const all = splitSections(code);
  // a fourth section is for text; so is a lone section that places the text (`"x"@`)
  const text = all.length >= 4 ? parseTextSection(all[3]!) : all.length === 1 && /@/.test(strip(all[0]!)) ? parseTextSection(all[0]!) : undefined;
  const withText = <F extends NumberFormat>(f: F): F => (text ? { ...f, text } : f);
  const sections = all.slice(0, 3);
  // what is left once quoted text, escapes and [colour]/[$€-407] are taken out
  const bare = strip(sections[0]!);
  if (/^general$/i.test(bare.trim()) || sections.some((s) => /\[[<>=]/.test(s))) return withText(GENERAL);
  if (/[dmyhs]/i.test(bare.replace(/E[+-]/gi, ''))) {
    const date = /[dy]/i.test(bare) || /m{3,}/i.test(bare);
    const elapsed = /\[(h+|m+|s+)\]/i.test(bare);
    return withText({ kind: 'date', date, time: /[hs]/i.test(bare) || !date, ...(elapsed ? { elapsed } : {}) });
  }
  if (/[@/]|E[+-]/i.test(bare)) return withText(GENERAL);
  // an empty section is kept: it parses to no tokens, and so hides the numbers it is for
  const [positive, negative, zero] = sections.map(parseSection);
  return withText({ kind: 'pattern', positive: positive!, ...(negative ? { negative } : {}), ...(zero ? { zero } : {}) });
}

/** A section without its quoted text, escapes and brackets other than the elapsed-time ones (`[h]`). */
const strip = (section: string): string => section.replace(/"[^"]*"|\\.|_.|\*.|\[(?!h+\]|m+\]|s+\])[^\]]*\]/gi, '');

/** A text section: its literals, and where the text goes (`@`); an empty section hides the text. */
function parseTextSection(s: string): TextSection {
  const out: TextSection = [];
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '"') {
      const end = s.indexOf('"', i + 1);
      out.push(s.slice(i + 1, end < 0 ? s.length : end));
      i = end < 0 ? s.length : end;
    } else if (c === '\\') out.push(s[++i] ?? '');
    else if (c === '_') {
      i++;
      out.push(' ');
    } else if (c === '*') i++;
    else if (c === '[') {
      const end = s.indexOf(']', i);
      i = end < 0 ? s.length : end;
    } else if (c === '@') out.push(undefined);
    else out.push(c);
  }
  return out;
}

/** A text cell as its format shows it: through the format's text section, when it has one. */
export function formatText(text: string, format: NumberFormat | undefined): string {
  if (!format?.text) return text;
  return format.text.map((piece) => piece ?? text).join('');
}

function splitSections(code: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < code.length; i++) {
    const c = code[i]!;
    if (c === '"') quoted = !quoted;
    if (c === '\\' && !quoted) {
      cur += c + (code[++i] ?? '');
      continue;
    }
    if (c === ';' && !quoted) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

function parseSection(s: string): Section {
  const tokens: Token[] = [];
  let percent = 0;
  let group = false;
  let fraction = false;
  const lit = (text: string): void => void tokens.push({ literal: text });
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '"') {
      const end = s.indexOf('"', i + 1);
      lit(s.slice(i + 1, end < 0 ? s.length : end));
      i = end < 0 ? s.length : end;
    } else if (c === '\\') lit(s[++i] ?? '');
    else if (c === '_') {
      i++;
      lit(' ');
    } else if (c === '*') i++;
    else if (c === '[') {
      const end = s.indexOf(']', i);
      const inside = s.slice(i + 1, end < 0 ? s.length : end);
      if (inside.startsWith('$')) lit(inside.slice(1).split('-')[0]!);
      i = end < 0 ? s.length : end;
    } else if (c === '0' || c === '#' || c === '?') tokens.push({ digit: c, fraction });
    else if (c === '.' && !fraction) {
      fraction = true;
      tokens.push({ point: true });
    } else if (c === ',') {
      const before = tokens.at(-1);
      const after = s[i + 1];
      if (before && 'digit' in before && !before.fraction && (after === '0' || after === '#' || after === '?')) group = true;
      else tokens.push({ literal: ',' });
    } else if (c === '%') {
      percent++;
      lit('%');
    } else lit(c);
  }
  // commas right after the last digit scale by a thousand each (they were kept as literals)
  let scale = 0;
  let last = -1;
  tokens.forEach((t, k) => ('digit' in t ? (last = k) : undefined));
  while (last >= 0 && tokens[last + 1] && 'literal' in tokens[last + 1]! && (tokens[last + 1] as { literal: string }).literal === ',') {
    tokens.splice(last + 1, 1);
    scale++;
  }
  // no digit: the section shows its text alone (`"neg"`), or nothing (an empty section hides the number)
  return { tokens, percent, scale, group };
}

/**
 * Excel's General: the number to 15 significant digits (what Excel keeps, so
 * 123456789012345678 shows as 123456789012346000), in Excel's exponent form
 * where JavaScript would use one (`1E-07`, `1.5E-07`, `1E+21`).
 */
export function general(v: number): string {
  const text = String(Number(v.toPrecision(15)));
  const e = text.indexOf('e');
  if (e < 0) return text;
  const exponent = text.slice(e + 2);
  return `${text.slice(0, e)}E${text[e + 1]}${exponent.length < 2 ? `0${exponent}` : exponent}`;
}

/**
 * `v` (≥ 0) with `decimals` digits after the point, as Excel shows it: the
 * number taken to 15 significant digits first, then rounded half up on that
 * decimal — so 1.005 (stored as 1.00499999…) shows `1.01`, and digits past
 * the 15th are zeros, never the binary value's noise. toFixed rounds the
 * binary value instead (`1.00`) and invents digits past the 15th.
 */
export function fixedDecimal(v: number, decimals: number): string {
  const [mantissa, exp] = v.toExponential(14).split('e') as [string, string];
  const digits = mantissa.replace('.', '');
  // digits kept: those before the point (exponent + 1) and the decimals
  const keep = Number(exp) + 1 + decimals;
  let kept: string;
  if (keep < 0 || v === 0) kept = '0';
  else if (keep >= digits.length) kept = digits + '0'.repeat(keep - digits.length);
  else {
    kept = digits.slice(0, keep) || '0';
    if (digits.charCodeAt(keep) >= 0x35 /* '5' */) kept = (BigInt(kept) + 1n).toString();
  }
  kept = kept.padStart(decimals + 1, '0');
  if (decimals === 0) return kept.replace(/^0+(?=\d)/, '');
  const int = kept.slice(0, kept.length - decimals).replace(/^0+(?=\d)/, '');
  return `${int}.${kept.slice(kept.length - decimals)}`;
}

export function formatNumber(v: number, format: NumberFormat, date1904: boolean): string {
  if (!Number.isFinite(v)) return String(v);
  if (format.kind === 'general') return general(v);
  if (format.kind === 'date') return formatDate(v, format, date1904);
  const section = v < 0 && format.negative ? format.negative : v === 0 && format.zero ? format.zero : format.positive;
  const signed = v < 0 && section === format.positive;
  const text = render(Math.abs(v), section);
  return signed && /[1-9]/.test(text) ? `-${text}` : text;
}

function render(v: number, s: Section): string {
  // 1E+21 and past keep the format too: Excel writes out every digit (`0` gives 1000000000000000000000)
  const scaled = (v * 100 ** s.percent) / 1000 ** s.scale;
  const digits = s.tokens.filter((t) => 'digit' in t);
  const fracCount = digits.filter((t) => t.fraction).length;
  const intSlots = digits.filter((t) => !t.fraction) as { digit: string }[];
  const fixed = fixedDecimal(scaled, fracCount);
  const [intRaw, fracRaw = ''] = fixed.split('.');
  // "0" shows a leading zero, "#" does not: pad to the count of `0` slots
  const intDigits = (intRaw === '0' ? '' : intRaw!).padStart(intSlots.filter((t) => t.digit === '0').length, '0');
  let out = '';
  if (s.group) {
    // contiguous digits with a thousands separator: the literals around them stay where they are
    const grouped = intDigits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
    let placed = false;
    let f = 0;
    for (const t of s.tokens) {
      if ('literal' in t) out += t.literal;
      else if ('point' in t) out += '.';
      else if (!t.fraction) {
        if (!placed) out += grouped;
        placed = true;
      } else out += fracDigit(fracRaw, f++, t.digit);
    }
    return out;
  }
  // digits fill the integer slots from the right; extra digits go to the first slot
  const slotDigits: string[] = [];
  let rest = intDigits;
  for (let k = intSlots.length - 1; k >= 0; k--) {
    if (k === 0) slotDigits[k] = rest;
    else {
      slotDigits[k] = rest.slice(-1);
      rest = rest.slice(0, -1);
    }
    if (slotDigits[k] === '' && intSlots[k]!.digit === '?') slotDigits[k] = ' ';
  }
  let slot = 0;
  let f = 0;
  for (const t of s.tokens) {
    if ('literal' in t) out += t.literal;
    else if ('point' in t) out += '.';
    else if (!t.fraction) out += slotDigits[slot++] ?? '';
    else out += fracDigit(fracRaw, f++, t.digit);
  }
  return out;
}

/** A fraction digit; `#` drops a trailing zero, `?` shows it as a space. */
function fracDigit(frac: string, k: number, slot: string): string {
  const d = frac[k] ?? '0';
  if (slot === '0' || !/^0*$/.test(frac.slice(k))) return d;
  return slot === '?' ? ' ' : '';
}

/**
 * Excel's day 0 is 1899-12-30 (day 60 being the 29 February 1900 that never
 * was); 1904 workbooks count from 1904-01-01. A time-only format shows the
 * time of day, whatever the date (45322.75 as `h:mm` is 18:00:00); an elapsed
 * one (`[h]:mm`) the whole duration, its hours past a day and its sign kept
 * (-0.5 is -12:00:00), as LibreOffice and Gnumeric show them (Excel shows
 * a negative time as #####).
 */
function formatDate(serial: number, f: { date: boolean; time: boolean; elapsed?: boolean }, date1904: boolean): string {
  if (f.elapsed && !f.date) return elapsedTime(serial);
  const days = date1904 ? serial + 1462 : serial < 60 && serial >= 1 ? serial + 1 : serial;
  const ms = Math.round(days * 86400) * 1000 + Date.UTC(1899, 11, 30);
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) return general(serial);
  const iso = d.toISOString();
  const day = iso.slice(0, 10);
  const time = iso.slice(11, 19);
  if (!f.date) return time;
  return f.time ? `${day} ${time}` : day;
}

/** A duration in days as [-]HH:MM:SS, to the nearest second, the hours counted on past 24. */
function elapsedTime(serial: number): string {
  const seconds = Math.round(Math.abs(serial) * 86400);
  if (!Number.isSafeInteger(seconds)) return general(serial);
  const two = (n: number): string => String(n).padStart(2, '0');
  const text = `${two(Math.floor(seconds / 3600))}:${two(Math.floor(seconds / 60) % 60)}:${two(seconds % 60)}`;
  return serial < 0 && seconds > 0 ? `-${text}` : text;
}

/**
 * A `t="d"` cell (an ISO 8601 date some writers store as text, e.g.
 * `2024-01-31T09:30:00Z`) in the form number dates take: `2024-01-31`, with
 * its time when it has one (`2024-01-31 09:30:00`), or as the cell's own date
 * or time format asks. The wall-clock time written is kept; a zone suffix is
 * not applied. Text that is no such date comes out as written.
 */
export function formatIsoDate(text: string, format: NumberFormat | undefined): string {
  const m = /^\s*(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?)?\s*(?:Z|[+-]\d{2}(?::?\d{2})?)?\s*$/i.exec(text);
  if (!m) return text;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = ''] = m;
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)) + Math.round(Number(`0${frac}`) * 1000);
  const date = new Date(Math.round(ms / 1000) * 1000);
  if (Number.isNaN(date.getTime())) return text;
  const iso = date.toISOString();
  const day = iso.slice(0, 10);
  const time = iso.slice(11, 19);
  if (format?.kind === 'date') {
    if (!format.date) return time;
    return format.time ? `${day} ${time}` : day;
  }
  return time === '00:00:00' ? day : `${day} ${time}`;
}
