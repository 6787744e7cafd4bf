import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CONTEXTJ, CONTEXTO, derivedProperty, domainToAscii, punycodeDecode, punycodeEncode, PVALID } from '../../src/codec/idna.js';
import { parseAddress } from '../../src/codec/syntax.js';

/** Accepted domains and their A-label form (IDN ccTLDs as python `idna` tests them, RFC 5892 examples). */
const ACCEPTED: [string, string, string][] = [
  ['German umlaut', 'bücher.de', 'xn--bcher-kva.de'],
  ['upper case is lowered', 'BÜCHER.DE', 'xn--bcher-kva.de'],
  ['NFD input is composed', 'bu\u0308cher.de', 'xn--bcher-kva.de'],
  ['Chinese', '例子.广告', 'xn--fsqu00a.xn--4rr70v'],
  ['Russian', 'почта.рф', 'xn--80a1acny.xn--p1ai'],
  ['Greek', 'παράδειγμα.δοκιμή', 'xn--hxajbheg2az3al.xn--jxalpdlp'],
  ['Japanese katakana', 'テスト.jp', 'xn--zckzah.jp'],
  ['Arabic', 'مثال.إختبار', 'xn--mgbh0fb.xn--kgbechtv'],
  ['Hebrew', 'טעסט.il', 'xn--deba0ad.il'],
  ['Devanagari with virama', 'परीक्षा.in', 'xn--11b5bs3a9aj6g.in'],
  ['Tamil', 'சிங்கப்பூர்.sg', 'xn--clchc0ea0b2g2a9gcd.sg'],
  ['Korean', '한국.kr', 'xn--3e0b707e.kr'],
  ['ß is PVALID (no mapping to ss)', 'faß.de', 'xn--fa-hia.de'],
  ['final sigma ς is PVALID', 'σόλος.gr', 'xn--wxaijb9b.gr'],
  ['dotless ı is PVALID', 'ı.com', 'xn--cfa.com'],
  ['Cherokee capitals are the PVALID form', 'Ꮴ.com', 'xn--3be.com'],
  ['hyphens away from positions 3-4', 'ԡԥԣ-ԣԣ-----ԡԣԣԣ.aa', 'xn---------90gglbagaar.aa'],
  ['ZWJ after a virama (RFC 5892 A.2)', 'क्\u200dष.in', 'xn--11b2ezcw70k.in'],
  ['ZWNJ after a virama (RFC 5892 A.1)', 'क्\u200cष.in', 'xn--11b2ezcs70k.in'],
  ['ZWNJ between Persian joining letters (A.1)', 'کتاب\u200cخانه.ir', 'xn--mgbacgw9lh19es68o.ir'],
  ['middle dot between two l (A.3, Catalan)', 'col·lecció.cat', 'xn--collecci-ioa91d.cat'],
  ['Greek keraia before Greek (A.4)', '\u0375α.gr', 'xn--wva4j.gr'],
  ['Hebrew geresh after Hebrew (A.5)', 'א\u05f3ב.il', 'xn--4dbc5h.il'],
  ['katakana middle dot with kana (A.7)', 'テ・ス.jp', 'xn--zckza1m.jp'],
  ['Arabic-Indic digits alone (A.8)', 'م٠١.eg', 'xn--hhb8cd.eg'],
  ['Hebrew with a digit at the end (RFC 5893 rule 3)', 'א1.il', 'xn--1-zhc.il'],
  ['Hebrew with a hyphen and a trailing mark (rules 2, 3)', 'א-ב\u0591.il', 'xn----fec1qf.il'],
  ['an A-label as it stands', 'xn--bcher-kva.de', 'xn--bcher-kva.de'],
  ['an A-label in capitals', 'XN--BCHER-KVA.DE', 'xn--bcher-kva.de'],
  ['a U-label beside an A-label', 'テスト.xn--zckzah', 'xn--zckzah.xn--zckzah'],
  ['ASCII labels with -- in positions 3-4 that are not xn-- stay hostnames', 'r3---sn-abc.googlevideo.com', 'r3---sn-abc.googlevideo.com'],
];

/** Refused domains and the reason given. */
const REFUSED: [string, string, RegExp][] = [
  ['currency sign €', '€.com', /U\+20AC is disallowed/],
  ['currency sign in a label', 'preis€.de', /U\+20AC is disallowed/],
  ['ASCII punctuation in a U-label', 'bü$cher.de', /U\+0024 is disallowed/],
  ['dollar-like symbol ¢', 'a¢b.com', /U\+00A2 is disallowed/],
  ['snowman', '☃.net', /U\+2603 is disallowed/],
  ['emoji', 'i❤.ws', /U\+2764 is disallowed/],
  ['emoji outside the BMP', '💩.la', /U\+1F4A9 is disallowed/],
  ['arrow', 'a→b.com', /U\+2192 is disallowed/],
  ['inverted exclamation mark', '¡hola.es', /U\+00A1 is disallowed/],
  ['guillemet', '«a».fr', /U\+00AB is disallowed/],
  ['copyright sign', 'a©.com', /U\+00A9 is disallowed/],
  ['full-width letter (not mapped)', 'ｅxample.com', /U\+FF45 is disallowed/],
  ['ideographic full stop as a dot (not mapped)', '例子。广告', /U\+3002 is disallowed/],
  ['compatibility ligature ﬁ', 'ﬁle.com', /U\+FB01 is disallowed/],
  // characters NFC replaces on their own: mapped, each would be the letter it stands for
  ['KELVIN SIGN', '\u212aelvin.com', /U\+212A is disallowed/],
  ['KELVIN SIGN beside a letter outside ASCII', '\u212aö.com', /U\+212A is disallowed/],
  ['OHM SIGN', '\u2126mega.com', /U\+2126 is disallowed/],
  ['ANGSTROM SIGN', '\u212bngström.se', /U\+212B is disallowed/],
  ['a CJK compatibility ideograph', '\uf900.jp', /U\+F900 is disallowed/],
  ['Greek question mark (NFC makes it a semicolon)', 'a\u037eb.gr', /U\+037E is disallowed/],
  ['Roman numeral Ⅻ', 'Ⅻ.com', /disallowed/],
  ['Arabic tatweel (exception F)', 'ممـم.com', /U\+0640 is disallowed/],
  ['vertical kana repeat mark (exception F)', 'あ〱.jp', /U\+3031 is disallowed/],
  ['old Hangul jamo', '\u1100\u1100.kr', /U\+1100 is disallowed/],
  ['combining mark for symbols', 'a\u20dd.com', /U\+20DD is disallowed/],
  ['Cherokee small letter (case folds to a capital)', 'ꮴ.com', /U\+ABB4 is disallowed/],
  ['unassigned code point', '\u0378a.com', /U\+0378 is unassigned/],
  ['a U-label with -- in positions 3-4', 'bü--cher.de', /hyphen in the 3rd and 4th/],
  ['a U-label starting with a hyphen', '-bücher.de', /hyphen at the start or end/],
  ['a U-label ending with a hyphen', 'bücher-.de', /hyphen at the start or end/],
  ['a label starting with a combining mark', '\u0301a.com', /starting with a combining mark/],
  ['ZWJ without a virama', 'a\u200db.com', /U\+200D \(a joiner\) out of its context/],
  ['ZWNJ between Latin letters', 'a\u200cb.com', /U\+200C \(a joiner\) out of its context/],
  ['middle dot not between two l', 'a·b.cat', /U\+00B7 out of its context/],
  ['middle dot at the start', '·l.cat', /U\+00B7 out of its context/],
  ['Greek keraia before Latin', '\u0375a.gr', /U\+0375 out of its context/],
  ['Hebrew geresh after Latin', 'a\u05f3.il', /U\+05F3 out of its context/],
  ['katakana middle dot among Latin letters', 'a・a.jp', /U\+30FB out of its context/],
  ['Arabic-Indic and extended Arabic-Indic digits mixed', 'م٠۰.eg', /out of its context/],
  ['Latin then Hebrew in one label (RFC 5893 rule 5)', 'aא.com', /Bidi rule: right-to-left characters in a left-to-right label/],
  ['Hebrew then Latin in one label (rule 2)', 'אa.il', /Bidi rule: left-to-right characters in a right-to-left label/],
  ['a digit before Hebrew (rule 1)', '1א.il', /Bidi rule: .* must start with a letter/],
  ['both kinds of Arabic digits (rule 4)', 'م1٠.eg', /Bidi rule: European and Arabic-Indic digits mixed/],
  ['a lone surrogate', 'a\ud800.com', /lone UTF-16 surrogate/],
  ['not Punycode: a digit value overflow', 'xn--99999999999999999999.com', /not valid Punycode/],
  ['not Punycode: a truncated integer', 'xn--bcher-kv.de', /not valid Punycode|invalid U-label/],
  ['not Punycode: xn-- alone', 'xn--.com', /not valid Punycode/],
  ['an A-label for plain ASCII', 'xn--abc-.com', /decodes to plain ASCII/],
  ['an A-label decoding to a C1 control', 'xn--a.com', /U\+0080 is disallowed/],
  ['an A-label decoding to a disallowed code point', 'xn--n3h.net', /U\+2603 is disallowed/],
  ['an A-label decoding to a currency sign', 'xn--lzg.com', /U\+20AC is disallowed/],
  ['an A-label decoding to upper case', 'xn--bcher-kvb.de', /invalid U-label/],
  ['an A-label decoding to a U-label with -- in 3-4', 'xn--ab--c-3ya.de', /hyphen in the 3rd and 4th/],
  ['an A-label python idna refuses to decode', 'xn---------90gglbagaac.aa', /invalid U-label/],
  ['an A-label that is not in canonical form (upper-case digits are fine, this is not)', 'xn--bcher-kva0.de', /not valid Punycode|invalid U-label|round-trip/],
];

describe('IDNA2008 domains', () => {
  it.each(ACCEPTED)('accepts %s: %s → %s', (_why, domain, ascii) => {
    expect(domainToAscii(domain)).toEqual({ ascii });
    expect(parseAddress(`user@${domain}`)?.domain).toBe(ascii);
  });

  it.each(REFUSED)('refuses %s: %s', (_why, domain, reason) => {
    const result = domainToAscii(domain);
    expect('error' in result ? result.error : `accepted as ${result.ascii}`).toMatch(reason);
    expect(parseAddress(`user@${domain}`)).toBeUndefined();
  });

  it('gives an ASCII xn-- label the same answer as its Unicode form (fast path = IDNA path)', () => {
    for (const [, , ascii] of ACCEPTED) expect(parseAddress(`user@${ascii}`)?.domain).toBe(ascii);
    for (const bad of ['xn--n3h.net', 'xn--lzg.com', 'XN--LZG.COM', 'xn--ab--c-3ya.de', 'xn--abc-.com', 'sub.xn--a.com']) {
      expect(parseAddress(`user@${bad}`), bad).toBeUndefined();
    }
  });

  it('accepts what UTS #46 maps but IDNA2008 disallows only when it is plain case (Node domainToASCII accepts them all)', () => {
    expect(parseAddress('user@ÄÖÜ.de')?.domain).toBe('xn--4ca0bs.de');
    expect(parseAddress('user@€uro.com')).toBeUndefined();
  });
});

describe('Punycode (RFC 3492 §7.1 samples)', () => {
  it.each([
    [
      '(A) Arabic (Egyptian)',
      '\u0644\u064A\u0647\u0645\u0627\u0628\u062A\u0643\u0644\u0645\u0648\u0634\u0639\u0631\u0628\u064A\u061F',
      'egbpdaj6bu4bxfgehfvwxn',
    ],
    ['(B) Chinese (simplified)', '\u4ED6\u4EEC\u4E3A\u4EC0\u4E48\u4E0D\u8BF4\u4E2D\u6587', 'ihqwcrb4cv8a8dqg056pqjye'],
    ['(L) Japanese mixed', '3\u5E74B\u7D44\u91D1\u516B\u5148\u751F', '3B-ww4c5e180e575a65lsy2b'],
    [
      '(R) Russian',
      '\u043F\u043E\u0447\u0435\u043C\u0443\u0436\u0435\u043E\u043D\u0438\u043D\u0435\u0433\u043E\u0432\u043E\u0440\u044F\u0442\u043F\u043E\u0440\u0443\u0441\u0441\u043A\u0438',
      'b1abfaaepdrnnbgefbaDotcwatmq2g4l',
    ],
    ['outside the BMP', '💩', 'ls8h'],
  ])('%s', (_name, unicode, puny) => {
    // the samples mark case in their digits; the encoder writes lower case
    expect(punycodeEncode(unicode).toLowerCase()).toBe(puny.toLowerCase());
    expect(punycodeDecode(puny)).toBe(unicode);
  });

  it.each(['-', 'a-', '9', 'b\u00e9-abc', 'a-!'])('refuses %j', (s) => {
    // each either fails to decode or decodes to nothing a label could hold
    const decoded = punycodeDecode(s);
    expect(decoded === undefined || decoded === '' || !/[^\x00-\x7f]/.test(decoded)).toBe(true);
  });
});

describe('derived property (RFC 5892 §3) from the engine Unicode data', () => {
  it.each([
    [0x61, PVALID],
    [0x41, 0],
    [0xdf, PVALID],
    [0x3c2, PVALID],
    [0x131, PVALID],
    [0x200c, CONTEXTJ],
    [0x200d, CONTEXTJ],
    [0xb7, CONTEXTO],
    [0x30fb, CONTEXTO],
    [0x660, CONTEXTO],
    [0x6f9, CONTEXTO],
    [0x640, 0],
    [0x20ac, 0],
    [0x24, 0],
    [0x13a0, PVALID],
    [0xab70, 0],
    [0x345, 0],
    [0x1fb3, 0],
    [0x1100, 0],
    [0xac00, PVALID],
    [0x3007, PVALID],
    [0xff41, 0],
  ])('U+%s', (c, want) => {
    const p = derivedProperty(c);
    expect(p <= CONTEXTO ? p : 0).toBe(want);
  });

  // python `idna` ships the IANA-style table; where it is installed, every code
  // point must agree (the Unicode versions must match, or unassigned ones differ)
  const table = pythonIdnaTable();
  it.skipIf(table === undefined)('agrees with python idna on every code point (Unicode versions matching)', () => {
    const want = new Uint8Array(0x110000);
    for (const [name, code] of [
      ['PVALID', PVALID],
      ['CONTEXTJ', CONTEXTJ],
      ['CONTEXTO', CONTEXTO],
    ] as const) {
      for (const [a, b] of table!.classes[name]!) want.fill(code, a, b);
    }
    const differ: string[] = [];
    for (let c = 0; c < 0x110000; c++) {
      const p = derivedProperty(c);
      if ((p <= CONTEXTO ? p : 0) !== want[c]) differ.push(c.toString(16));
    }
    expect(differ.slice(0, 20)).toEqual([]);
  });
});

function pythonIdnaTable(): { classes: Record<string, [number, number][]> } | undefined {
  const script = [
    'import json, idna.idnadata as d',
    'print(json.dumps({"unicode": d.__version__, "classes": {k: [[r >> 32, r & 0xffffffff] for r in v] for k, v in d.codepoint_classes.items()}}))',
  ].join('\n');
  try {
    const out = JSON.parse(execFileSync('python3', ['-c', script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 }));
    // compare only when both sides derive from the same Unicode version
    const majorMinor = (v: string) => v.split('.').slice(0, 2).join('.');
    return majorMinor(out.unicode) === majorMinor(process.versions.unicode!) ? out : undefined;
  } catch {
    return undefined;
  }
}
