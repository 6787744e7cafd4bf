/**
 * The XML of an .xlsx workbook of one sheet, as text: the fixed parts and the
 * cells. Pure; xlsx-writer.ts streams it into a zip.
 */

/** What one sheet of the format holds (Excel's specifications and limits). */
export const XLSX_SHEET_LIMITS = {
  /** columns A..XFD */
  columns: 16_384,
  /** rows, the header included */
  rows: 1_048_576,
  /** characters (UTF-16 code units, as Excel counts them) in one cell */
  cellChars: 32_767,
} as const;

/** `0` → `A`, `25` → `Z`, `26` → `AA`, `16383` → `XFD`. */
export function columnLetters(index: number): string {
  let s = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) s = String.fromCharCode(65 + ((n - 1) % 26)) + s;
  return s;
}

/**
 * What text needs escaping in a cell: XML's `&` and `<` (`>` too, for `]]>`),
 * characters XML 1.0 cannot carry (C0 controls but tab and LF, U+FFFE/U+FFFF,
 * a lone surrogate), CR (every XML parser turns CRLF into LF), and a literal
 * `_xHHHH_`, which a reader would take for an escape.
 */
const NEEDS_ESCAPE = /[&<>\x00-\x08\x0B-\x1F\uD800-\uDFFF\uFFFE\uFFFF]|_x[0-9A-Fa-f]{4}_/;
const ESCAPES = /[&<>]|[\x00-\x08\x0B-\x1F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|_(?=x[0-9A-Fa-f]{4}_)/g;

const hex4 = (code: number): string => `_x${code.toString(16).toUpperCase().padStart(4, '0')}_`;

function escapeOne(c: string): string {
  switch (c) {
    case '&':
      return '&amp;';
    case '<':
      return '&lt;';
    case '>':
      return '&gt;';
    default:
      // a control character, a lone surrogate, or the `_` of a literal `_xHHHH_` (→ `_x005F_xHHHH_`)
      return hex4(c.charCodeAt(0));
  }
}

/**
 * A cell's text as the content of `<t xml:space="preserve">`: XML-escaped, and
 * what XML cannot carry written Excel's way, `_xHHHH_` (CR is `_x000D_`, a
 * literal `_x0001_` is `_x005F_x0001_`), so Excel and LibreOffice read back
 * exactly the text written.
 */
export function escapeCellText(text: string): string {
  return NEEDS_ESCAPE.test(text) ? text.replace(ESCAPES, escapeOne) : text;
}

/** A text cell: an inline string, its spaces kept. Never `t="str"`, which is a formula's result. */
export const textCell = (ref: string, text: string): string => `<c r="${ref}" t="inlineStr"><is><t xml:space="preserve">${escapeCellText(text)}</t></is></c>`;

/** A number cell; a value that is not a finite number is written as its text. */
export const numberCell = (ref: string, n: number): string => (Number.isFinite(n) ? `<c r="${ref}"><v>${n}</v></c>` : textCell(ref, String(n)));

export const booleanCell = (ref: string, b: boolean): string => `<c r="${ref}" t="b"><v>${b ? 1 : 0}</v></c>`;

const HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PKG_REL = 'http://schemas.openxmlformats.org/package/2006/relationships';

/** The sheet's XML before its first row, and after its last. */
export const SHEET_START = `${HEAD}<worksheet xmlns="${MAIN}" xmlns:r="${REL}"><sheetData>`;
export const SHEET_END = '</sheetData></worksheet>';

/** The parts every workbook needs besides its sheet, by their names in the zip; the sheet is `SHEET_PATH`. */
export const SHEET_PATH = 'xl/worksheets/sheet1.xml';

export function workbookParts(sheetName: string): [string, string][] {
  return [
    [
      '[Content_Types].xml',
      `${HEAD}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
        '<Default Extension="xml" ContentType="application/xml"/>' +
        '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>' +
        '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>' +
        '<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>' +
        '</Types>',
    ],
    [
      '_rels/.rels',
      `${HEAD}<Relationships xmlns="${PKG_REL}">` + `<Relationship Id="rId1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    ],
    [
      'xl/workbook.xml',
      `${HEAD}<workbook xmlns="${MAIN}" xmlns:r="${REL}"><sheets>` + `<sheet name="${escapeCellText(sheetName)}" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    ],
    [
      'xl/_rels/workbook.xml.rels',
      `${HEAD}<Relationships xmlns="${PKG_REL}">` +
        `<Relationship Id="rId1" Type="${REL}/worksheet" Target="worksheets/sheet1.xml"/>` +
        `<Relationship Id="rId2" Type="${REL}/styles" Target="styles.xml"/></Relationships>`,
    ],
    [
      // the one style every cell has (0): Excel repairs a workbook whose styles part lacks it
      'xl/styles.xml',
      `${HEAD}<styleSheet xmlns="${MAIN}">` +
        '<fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts>' +
        '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>' +
        '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>' +
        '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>' +
        '<cellXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/></cellXfs>' +
        '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>' +
        '</styleSheet>',
    ],
  ];
}
