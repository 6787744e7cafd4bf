/**
 * IDNA2008 (RFC 5890-5893) for the domain of an address: which labels may stand
 * in a domain, and their ASCII (A-label) form.
 *
 * Deliberately stricter than UTS #46 (WHATWG URL's `domainToASCII`), which maps
 * and accepts symbols and punctuation (currency signs, arrows, dingbats) that
 * IDNA2008 disallows. The only mappings applied to a non-ASCII label are lower
 * casing and NFC (RFC 5895 steps 1 and 3: case is not significant in a domain,
 * and a canonically equivalent spelling is the same name), and never to a
 * character NFC replaces on its own, such as KELVIN SIGN (duplicateCodePoint). Full-width letters,
 * ideographic full stops as dots and other compatibility forms are refused, not
 * mapped: a mail server would receive them as written.
 *
 * The derived property of each code point (RFC 5892 §3) is computed from the
 * Unicode data of the JS engine (property escapes, case mapping, normalisation)
 * on first use and cached. Where JS exposes no property the rule is
 * approximated, as marked below; checked against python `idna` 3.13's table
 * (Unicode 17, as Node's ICU here): see test/codec/idna.test.ts.
 */

// ---------------------------------------------------------------- Punycode (RFC 3492)

const BASE = 36;
const TMIN = 1;
const TMAX = 26;
const SKEW = 38;
const DAMP = 700;
const INITIAL_BIAS = 72;
const INITIAL_N = 128;
const MAXINT = 0x7fffffff;

function adapt(delta: number, numPoints: number, first: boolean): number {
  delta = first ? Math.floor(delta / DAMP) : delta >> 1;
  delta += Math.floor(delta / numPoints);
  let k = 0;
  while (delta > ((BASE - TMIN) * TMAX) >> 1) {
    delta = Math.floor(delta / (BASE - TMIN));
    k += BASE;
  }
  return k + Math.floor(((BASE - TMIN + 1) * delta) / (delta + SKEW));
}

function threshold(k: number, bias: number): number {
  return k <= bias ? TMIN : k >= bias + TMAX ? TMAX : k - bias;
}

/** Punycode digit value of a character code: a-z/A-Z 0-25, 0-9 26-35; -1 otherwise. */
function digitValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30 + 26;
  if (c >= 0x61 && c <= 0x7a) return c - 0x61;
  if (c >= 0x41 && c <= 0x5a) return c - 0x41;
  return -1;
}

function digitChar(d: number): string {
  return String.fromCharCode(d < 26 ? 0x61 + d : 0x30 + d - 26);
}

/** Decodes the part after `xn--`; undefined when it is not valid Punycode. */
export function punycodeDecode(input: string): string | undefined {
  const delimiter = input.lastIndexOf('-');
  const out: number[] = [];
  for (let j = 0; j < delimiter; j++) {
    const c = input.charCodeAt(j);
    if (c >= 0x80) return undefined;
    out.push(c);
  }
  let n = INITIAL_N;
  let bias = INITIAL_BIAS;
  let i = 0;
  for (let pos = delimiter > 0 ? delimiter + 1 : 0; pos < input.length; ) {
    const oldi = i;
    let w = 1;
    for (let k = BASE; ; k += BASE) {
      if (pos >= input.length) return undefined; // a truncated variable-length integer
      const digit = digitValue(input.charCodeAt(pos++));
      if (digit < 0 || digit > Math.floor((MAXINT - i) / w)) return undefined;
      i += digit * w;
      const t = threshold(k, bias);
      if (digit < t) break;
      if (w > Math.floor(MAXINT / (BASE - t))) return undefined;
      w *= BASE - t;
    }
    const len = out.length + 1;
    bias = adapt(i - oldi, len, oldi === 0);
    if (Math.floor(i / len) > MAXINT - n) return undefined;
    n += Math.floor(i / len);
    i %= len;
    if (n > 0x10ffff || (n >= 0xd800 && n <= 0xdfff)) return undefined;
    out.splice(i, 0, n);
    i++;
  }
  return String.fromCodePoint(...out);
}

/** Encodes a (short: one label) string as Punycode, without the `xn--` prefix. */
export function punycodeEncode(input: string): string {
  const cps = Array.from(input, (ch) => ch.codePointAt(0)!);
  let out = '';
  for (const c of cps) if (c < 0x80) out += String.fromCharCode(c);
  const basic = out.length;
  let handled = basic;
  if (basic > 0) out += '-';
  let n = INITIAL_N;
  let delta = 0;
  let bias = INITIAL_BIAS;
  while (handled < cps.length) {
    let m = MAXINT;
    for (const c of cps) if (c >= n && c < m) m = c;
    delta += (m - n) * (handled + 1);
    n = m;
    for (const c of cps) {
      if (c < n) delta++;
      if (c !== n) continue;
      let q = delta;
      for (let k = BASE; ; k += BASE) {
        const t = threshold(k, bias);
        if (q < t) break;
        out += digitChar(t + ((q - t) % (BASE - t)));
        q = Math.floor((q - t) / (BASE - t));
      }
      out += digitChar(q);
      bias = adapt(delta, handled + 1, handled === basic);
      delta = 0;
      handled++;
    }
    delta++;
    n++;
  }
  return out;
}

// ---------------------------------------------------------------- derived property (RFC 5892 §3)

export const PVALID = 1;
export const CONTEXTJ = 2;
export const CONTEXTO = 3;
export const DISALLOWED = 4;
export const UNASSIGNED = 5;

/** RFC 5892 §2.6 Exceptions (F). */
const EXCEPTIONS = new Map<number, number>([
  [0x00df, PVALID], // ß
  [0x03c2, PVALID], // ς
  [0x06fd, PVALID],
  [0x06fe, PVALID],
  [0x0f0b, PVALID],
  [0x3007, PVALID],
  [0x00b7, CONTEXTO], // middle dot
  [0x0375, CONTEXTO], // Greek keraia
  [0x05f3, CONTEXTO], // Hebrew geresh
  [0x05f4, CONTEXTO], // Hebrew gershayim
  [0x30fb, CONTEXTO], // katakana middle dot
  [0x0640, DISALLOWED], // Arabic tatweel
  [0x07fa, DISALLOWED], // N'Ko lajanyalan
  [0x302e, DISALLOWED],
  [0x302f, DISALLOWED],
  [0x3031, DISALLOWED],
  [0x3032, DISALLOWED],
  [0x3033, DISALLOWED],
  [0x3034, DISALLOWED],
  [0x3035, DISALLOWED],
  [0x303b, DISALLOWED],
]);
for (let c = 0x0660; c <= 0x0669; c++) EXCEPTIONS.set(c, CONTEXTO); // Arabic-Indic digits
for (let c = 0x06f0; c <= 0x06f9; c++) EXCEPTIONS.set(c, CONTEXTO); // extended Arabic-Indic digits

const RE_UNASSIGNED = /^\p{Cn}$/u;
const RE_LETTER_DIGIT = /^[\p{Ll}\p{Lu}\p{Lo}\p{Nd}\p{Lm}\p{Mn}\p{Mc}]$/u;
const RE_IGNORABLE = /^[\p{Default_Ignorable_Code_Point}\p{White_Space}\p{Noncharacter_Code_Point}]$/u;

/** IgnorableBlocks (D): Combining Diacritical Marks for Symbols, Musical Symbols, Ancient Greek Musical Notation. */
function inIgnorableBlock(c: number): boolean {
  return (c >= 0x20d0 && c <= 0x20ff) || (c >= 0x1d100 && c <= 0x1d24f);
}

/** OldHangulJamo (I): Hangul_Syllable_Type L, V or T (no JS property escape; the ranges of Unicode 17). */
function isOldHangulJamo(c: number): boolean {
  return (c >= 0x1100 && c <= 0x11ff) || (c >= 0xa960 && c <= 0xa97c) || (c >= 0xd7b0 && c <= 0xd7c6) || (c >= 0xd7cb && c <= 0xd7fb);
}

/**
 * toCaseFold of one code point. JS has no case folding; lower(upper(c)) gives
 * the same answer except where noted (the differences found against the
 * Unicode 17 table): Cherokee folds to its capitals, dotless ı folds to itself.
 */
function caseFold(s: string): string {
  let out = '';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c >= 0x13a0 && c <= 0x13f5) out += ch;
    else if (c >= 0x13f8 && c <= 0x13fd) out += String.fromCodePoint(c - 8);
    else if (c >= 0xab70 && c <= 0xabbf) out += String.fromCodePoint(c - 0xab70 + 0x13a0);
    else if (c === 0x0131) out += ch;
    else out += ch.toUpperCase().toLowerCase();
  }
  return out;
}

function derive(c: number): number {
  const exception = EXCEPTIONS.get(c);
  if (exception !== undefined) return exception;
  const s = String.fromCodePoint(c);
  if (c >= 0xd800 && c <= 0xdfff) return DISALLOWED; // a lone surrogate is no code point of text
  if (RE_UNASSIGNED.test(s)) return UNASSIGNED;
  if ((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2d) return PVALID;
  if (c === 0x200c || c === 0x200d) return CONTEXTJ;
  const nfkc = s.normalize('NFKC');
  if (caseFold(nfkc).normalize('NFKC') !== s) return DISALLOWED; // Unstable (B)
  if (RE_IGNORABLE.test(s)) return DISALLOWED;
  if (inIgnorableBlock(c)) return DISALLOWED;
  if (isOldHangulJamo(c)) return DISALLOWED;
  if (RE_LETTER_DIGIT.test(s)) return PVALID;
  return DISALLOWED;
}

// one byte per code point, filled on first use (0 = not yet derived)
const table = new Uint8Array(0x110000);

export function derivedProperty(c: number): number {
  let p = table[c]!;
  if (p === 0) table[c] = p = derive(c);
  return p;
}

// ---------------------------------------------------------------- contextual rules (RFC 5892 Appendix A)

const VIRAMA_PROBE_8 = '\u3099'; // canonical combining class 8
const VIRAMA_PROBE_9 = '\u094d'; // canonical combining class 9 (Devanagari virama)

/**
 * Canonical_Combining_Class(c) = Virama (9). JS has no such property, but
 * canonical reordering reveals it exactly: NFD moves a mark of class 8 before c
 * only when c's class is above 8, and one of class 9 only when it is above 9.
 */
function isVirama(c: number): boolean {
  const s = String.fromCodePoint(c);
  if (s.normalize('NFD') !== s) return false;
  const moves = (probe: string) => (s + probe).normalize('NFD') !== s + probe;
  return moves(VIRAMA_PROBE_8) && !moves(VIRAMA_PROBE_9);
}

/**
 * Joining_Type L/D/R, approximated: JS exposes no Joining_Type, so any letter of
 * a cursively joined script counts as dual-joining. Right-joining letters (alef,
 * dal, reh, waw...) therefore pass where RFC 5892 wants L or D before a ZWNJ.
 */
const RE_JOINING =
  /^[\p{Script=Arabic}\p{Script=Syriac}\p{Script=Nko}\p{Script=Mongolian}\p{Script=Mandaic}\p{Script=Manichaean}\p{Script=Psalter_Pahlavi}\p{Script=Adlam}\p{Script=Hanifi_Rohingya}\p{Script=Sogdian}\p{Script=Old_Uyghur}\p{Script=Phags_Pa}]$/u;
/** Joining_Type T (transparent), approximated as the non-spacing and enclosing marks and format characters. */
const RE_TRANSPARENT = /^[\p{Mn}\p{Me}\p{Cf}]$/u;
const RE_GREEK = /^\p{Script=Greek}$/u;
const RE_HEBREW = /^\p{Script=Hebrew}$/u;
const RE_KANA_HAN = /^[\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Han}]$/u;

function contextJ(cps: number[], i: number): boolean {
  const before = cps[i - 1];
  if (before !== undefined && isVirama(before)) return true;
  if (cps[i] === 0x200d) return false;
  // ZWNJ between joining letters, transparent marks skipped on either side
  let j = i - 1;
  while (j >= 0 && RE_TRANSPARENT.test(String.fromCodePoint(cps[j]!))) j--;
  if (j < 0 || !RE_JOINING.test(String.fromCodePoint(cps[j]!))) return false;
  j = i + 1;
  while (j < cps.length && RE_TRANSPARENT.test(String.fromCodePoint(cps[j]!))) j++;
  return j < cps.length && RE_JOINING.test(String.fromCodePoint(cps[j]!));
}

function contextO(cps: number[], i: number): boolean {
  const c = cps[i]!;
  const before = cps[i - 1];
  const after = cps[i + 1];
  if (c === 0x00b7) return before === 0x6c && after === 0x6c;
  if (c === 0x0375) return after !== undefined && RE_GREEK.test(String.fromCodePoint(after));
  if (c === 0x05f3 || c === 0x05f4) return before !== undefined && RE_HEBREW.test(String.fromCodePoint(before));
  if (c === 0x30fb) return cps.some((d) => d !== 0x30fb && RE_KANA_HAN.test(String.fromCodePoint(d)));
  if (c >= 0x0660 && c <= 0x0669) return !cps.some((d) => d >= 0x06f0 && d <= 0x06f9);
  if (c >= 0x06f0 && c <= 0x06f9) return !cps.some((d) => d >= 0x0660 && d <= 0x0669);
  return false;
}

// ---------------------------------------------------------------- the Bidi rule (RFC 5893)

const BIDI_L = 1;
const BIDI_R = 2; // R or AL: the rule treats them alike
const BIDI_AN = 3;
const BIDI_EN = 4;
const BIDI_NSM = 5;
const BIDI_OTHER = 6; // ES, CS, ET, ON, BN: allowed inside either kind of label

/**
 * Right-to-left scripts (Bidi_Class R or AL for their letters). Only scripts of
 * Unicode 15.1 and earlier: an unknown script name is a SyntaxError on older
 * Node versions within `engines`.
 */
const RE_RTL = new RegExp(
  `^[${[
    'Hebrew',
    'Arabic',
    'Syriac',
    'Thaana',
    'Nko',
    'Samaritan',
    'Mandaic',
    'Adlam',
    'Hanifi_Rohingya',
    'Mende_Kikakui',
    'Yezidi',
    'Old_South_Arabian',
    'Old_North_Arabian',
    'Imperial_Aramaic',
    'Phoenician',
    'Kharoshthi',
    'Avestan',
    'Inscriptional_Parthian',
    'Inscriptional_Pahlavi',
    'Psalter_Pahlavi',
    'Manichaean',
    'Nabataean',
    'Palmyrene',
    'Hatran',
    'Lydian',
    'Meroitic_Cursive',
    'Meroitic_Hieroglyphs',
    'Old_Hungarian',
    'Old_Sogdian',
    'Sogdian',
    'Elymaic',
    'Chorasmian',
    'Old_Uyghur',
    'Cypriot',
    'Old_Turkic',
  ]
    .map((script) => `\\p{Script=${script}}`)
    .join('')}]$`,
  'u',
);

/**
 * Bidi_Class of a code point that may stand in a U-label. JS exposes no
 * Bidi_Class, so it is approximated: marks are NSM, the letters and digits of
 * right-to-left scripts R, the two sets of Arabic digits AN and EN as RFC 5893
 * has them, and every other letter or digit L. Against Unicode 14's Bidi_Class
 * this differs for 6 of the 129,202 PVALID code points (5 marks that are L,
 * 1 that is NSM).
 */
function bidiClass(c: number): number {
  if (c === 0x2d || c === 0x00b7 || c === 0x0375 || c === 0x30fb || c === 0x200c || c === 0x200d) return BIDI_OTHER;
  // modifier letters of class ON (Unicode 14 data)
  if (c === 0x2b9 || c === 0x2ba || (c >= 0x2c6 && c <= 0x2cf) || c === 0x2ec || c === 0x2e2f || c === 0xa67f || (c >= 0xa717 && c <= 0xa71f) || c === 0xa788) {
    return BIDI_OTHER;
  }
  if ((c >= 0x30 && c <= 0x39) || (c >= 0x06f0 && c <= 0x06f9)) return BIDI_EN;
  if ((c >= 0x0660 && c <= 0x0669) || (c >= 0x10d30 && c <= 0x10d39)) return BIDI_AN;
  const s = String.fromCodePoint(c);
  if (RE_NSM.test(s)) return BIDI_NSM;
  return RE_RTL.test(s) ? BIDI_R : BIDI_L;
}
const RE_NSM = /^[\p{Mn}\p{Me}]$/u;

/**
 * Why a label breaks the Bidi rule; undefined when it keeps it. As python
 * `idna` does, only labels holding right-to-left characters are checked (RFC
 * 5893 would also check the other labels of such a domain).
 */
function bidiError(cps: readonly number[]): string | undefined {
  const classes = cps.map(bidiClass);
  if (!classes.some((k) => k === BIDI_R || k === BIDI_AN)) return undefined;
  let last = classes.length - 1;
  while (last > 0 && classes[last] === BIDI_NSM) last--;
  const end = classes[last];
  if (classes[0] === BIDI_L) return 'Bidi rule: right-to-left characters in a left-to-right label';
  if (classes[0] !== BIDI_R) return 'Bidi rule: a label with right-to-left characters must start with a letter';
  if (classes.includes(BIDI_L)) return 'Bidi rule: left-to-right characters in a right-to-left label';
  if (end !== BIDI_R && end !== BIDI_EN && end !== BIDI_AN) return 'Bidi rule: a right-to-left label must end with a letter or digit';
  if (classes.includes(BIDI_EN) && classes.includes(BIDI_AN)) return 'Bidi rule: European and Arabic-Indic digits mixed';
  return undefined;
}

// ---------------------------------------------------------------- labels and domains

const RE_MARK = /^\p{M}$/u;
// with the u flag a surrogate matches only when it is not half of a pair
const RE_SURROGATE = /\p{Cs}/u;

function hex(c: number): string {
  return `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * Why `label` is not a U-label (RFC 5891 §5.4: NFC, hyphens, no leading
 * combining mark, every code point PVALID or allowed by its context rule);
 * undefined when it is one; then the Bidi rule (RFC 5893, approximated).
 */
export function uLabelError(label: string): string | undefined {
  if (label.normalize('NFC') !== label) return 'not in Unicode NFC';
  if (label.charCodeAt(2) === 0x2d && label.charCodeAt(3) === 0x2d) return 'a hyphen in the 3rd and 4th positions';
  if (label.startsWith('-') || label.endsWith('-')) return 'a hyphen at the start or end of a label';
  const cps = Array.from(label, (ch) => ch.codePointAt(0)!);
  if (RE_MARK.test(String.fromCodePoint(cps[0]!))) return 'a label starting with a combining mark';
  for (let i = 0; i < cps.length; i++) {
    const c = cps[i]!;
    switch (derivedProperty(c)) {
      case PVALID:
        break;
      case CONTEXTJ:
        if (!contextJ(cps, i)) return `${hex(c)} (a joiner) out of its context`;
        break;
      case CONTEXTO:
        if (!contextO(cps, i)) return `${hex(c)} out of its context`;
        break;
      case UNASSIGNED:
        return `${hex(c)} is unassigned`;
      default:
        return `${hex(c)} is disallowed by IDNA2008`;
    }
  }
  return bidiError(cps);
}

/**
 * Lower-cases the code points that are not valid as they stand: Cherokee
 * capitals are the valid form (their small letters fold to them), so a
 * whole-label toLowerCase would turn a valid label into an invalid one.
 */
function lowerCase(label: string): string {
  let out = '';
  for (const ch of label) out += derivedProperty(ch.codePointAt(0)!) === DISALLOWED ? ch.toLowerCase() : ch;
  return out;
}

/**
 * The first code point of `label` that NFC replaces on its own (KELVIN SIGN by
 * K, OHM SIGN by Ω, ANGSTROM SIGN by Å, a CJK compatibility ideograph by its
 * unified one), or undefined. Such a character is a second spelling of a letter,
 * never NFC and so never PVALID (RFC 5892 §2.7): RFC 5895's NFC and lower casing
 * would make `a@` + KELVIN SIGN + `ö.com` the address `a@kö.com`, an invalid
 * spelling with a valid address's key. Combining sequences are not affected:
 * each of their code points is NFC on its own.
 */
function duplicateCodePoint(label: string): number | undefined {
  for (const ch of label) {
    if (ch.charCodeAt(0) >= 0x80 && ch.normalize('NFC') !== ch) return ch.codePointAt(0);
  }
  return undefined;
}

/**
 * Why an ASCII `xn--` label is not an A-label: not Punycode, decodes to
 * something that is no U-label (or to plain ASCII), or does not encode back to
 * itself. `label` is lower case.
 */
export function aLabelError(label: string): string | undefined {
  const decoded = punycodeDecode(label.slice(4));
  if (decoded === undefined || decoded === '') return `${label} is not valid Punycode`;
  if (!/[^\x00-\x7f]/.test(decoded)) return `${label} decodes to plain ASCII`;
  const why = uLabelError(decoded);
  if (why !== undefined) return `${label} decodes to an invalid U-label: ${why}`;
  if (`xn--${punycodeEncode(decoded)}` !== label) return `${label} does not round-trip`;
  return undefined;
}

/**
 * The A-label form of a domain holding non-ASCII characters, or why it is not a
 * valid IDNA2008 domain. ASCII labels are only lower-cased (and `xn--` ones
 * checked as A-labels); the caller checks the LDH syntax and lengths of the result.
 */
export function domainToAscii(domain: string): { ascii: string } | { error: string } {
  const labels = domain.split('.');
  for (let k = 0; k < labels.length; k++) {
    let label = labels[k]!;
    if (!/[^\x00-\x7f]/.test(label)) {
      label = label.toLowerCase();
      if (label.startsWith('xn--')) {
        const why = aLabelError(label);
        if (why !== undefined) return { error: why };
      }
      labels[k] = label;
      continue;
    }
    if (RE_SURROGATE.test(label)) return { error: 'a lone UTF-16 surrogate' };
    const twin = duplicateCodePoint(label);
    if (twin !== undefined) return { error: `${hex(twin)} is disallowed by IDNA2008: NFC replaces it with another code point` };
    label = lowerCase(label).normalize('NFC');
    const why = uLabelError(label);
    if (why !== undefined) return { error: why };
    labels[k] = `xn--${punycodeEncode(label)}`;
  }
  return { ascii: labels.join('.') };
}
