import { crc32, deflateRawSync } from 'node:zlib';

/** One member of a hand-made zip; the overrides make it lie about itself. */
export interface ZipPart {
  name: string;
  data: string | Buffer;
  /** 8 (deflate, default) or 0 (stored); any other number is written as given, with the data deflated */
  method?: number;
  /** replaces the compressed bytes (corrupt deflate data) */
  compressed?: Buffer;
  /** the size the headers declare, instead of the true one */
  declaredSize?: number;
  /** the CRC-32 of these bytes is declared instead of the data's own */
  crcOf?: string | Buffer;
}

/** A zip archive with its members in the order given, its central directory at the end. */
export function zip(parts: ZipPart[]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const p of parts) {
    const data = Buffer.isBuffer(p.data) ? p.data : Buffer.from(p.data);
    const method = p.method ?? 8;
    const body = p.compressed ?? (method === 0 ? data : deflateRawSync(data));
    const name = Buffer.from(p.name);
    const size = p.declaredSize ?? data.length;
    const crc = crc32(p.crcOf ?? data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x800, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    const dir = Buffer.alloc(46);
    dir.writeUInt32LE(0x02014b50, 0);
    dir.writeUInt16LE(20, 4);
    dir.writeUInt16LE(20, 6);
    dir.writeUInt16LE(0x800, 8);
    dir.writeUInt16LE(method, 10);
    dir.writeUInt32LE(crc, 16);
    dir.writeUInt32LE(body.length, 20);
    dir.writeUInt32LE(size, 24);
    dir.writeUInt16LE(name.length, 28);
    dir.writeUInt32LE(offset, 42);
    locals.push(local, name, body);
    central.push(dir, name);
    offset += local.length + name.length + body.length;
  }
  const dirBytes = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(parts.length, 8);
  end.writeUInt16LE(parts.length, 10);
  end.writeUInt32LE(dirBytes.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dirBytes, end]);
}

/** A cell of a hand-made sheet: text (shared, or inline), or a number with a number format. */
export type Cell = string | { inline: string } | { number: number; format?: string } | null;

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const column = (i: number): string => (i >= 26 ? column(Math.floor(i / 26) - 1) : '') + String.fromCharCode(65 + (i % 26));

/**
 * The parts of a one-sheet workbook in the order Excel writes them: the sheet
 * first, then theme, styles and the shared strings it refers to.
 */
export function excelParts(rows: Cell[][], options: { sheetXml?: string; sharedStringsXml?: string } = {}): ZipPart[] {
  const strings: string[] = [];
  const formats: string[] = [];
  const index = new Map<string, number>();
  const sheetRows = rows.map((row, r) => {
    const cells = row.map((cell, c) => {
      const ref = `${column(c)}${r + 1}`;
      if (cell === null) return '';
      if (typeof cell === 'string') {
        if (!index.has(cell)) index.set(cell, strings.push(cell) - 1);
        return `<c r="${ref}" t="s"><v>${index.get(cell)}</v></c>`;
      }
      if ('inline' in cell) return `<c r="${ref}" t="inlineStr"><is><t xml:space="preserve">${esc(cell.inline)}</t></is></c>`;
      let style = 0;
      if (cell.format !== undefined) {
        style = formats.indexOf(cell.format) + 1 || formats.push(cell.format);
      }
      return `<c r="${ref}"${style ? ` s="${style}"` : ''}><v>${cell.number}</v></c>`;
    });
    return `<row r="${r + 1}">${cells.join('')}</row>`;
  });
  const ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
  const rel = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
  const xml = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n';
  return [
    {
      name: '[Content_Types].xml',
      data: `${xml}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/theme/theme1.xml" ContentType="application/vnd.openxmlformats-officedocument.theme+xml"/><Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>`,
    },
    {
      name: '_rels/.rels',
      data: `${xml}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${rel}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    },
    { name: 'xl/workbook.xml', data: `${xml}<workbook ${ns}><workbookPr/><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>` },
    {
      name: 'xl/_rels/workbook.xml.rels',
      data: `${xml}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId3" Type="${rel}/styles" Target="styles.xml"/><Relationship Id="rId2" Type="${rel}/theme" Target="theme/theme1.xml"/><Relationship Id="rId1" Type="${rel}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId4" Type="${rel}/sharedStrings" Target="sharedStrings.xml"/></Relationships>`,
    },
    {
      name: 'xl/worksheets/sheet1.xml',
      data: options.sheetXml ?? `${xml}<worksheet ${ns}><dimension ref="A1"/><sheetData>${sheetRows.join('')}</sheetData></worksheet>`,
    },
    {
      name: 'xl/theme/theme1.xml',
      data: `${xml}<a:theme xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" name="Office Theme"><a:themeElements/></a:theme>`,
    },
    {
      name: 'xl/styles.xml',
      data: `${xml}<styleSheet ${ns}><numFmts count="${formats.length}">${formats.map((f, k) => `<numFmt numFmtId="${164 + k}" formatCode="${esc(f)}"/>`).join('')}</numFmts><cellStyleXfs count="1"><xf numFmtId="0"/></cellStyleXfs><cellXfs count="${formats.length + 1}"><xf numFmtId="0" xfId="0"/>${formats.map((_, k) => `<xf numFmtId="${164 + k}" xfId="0" applyNumberFormat="1"/>`).join('')}</cellXfs></styleSheet>`,
    },
    {
      name: 'xl/sharedStrings.xml',
      data:
        options.sharedStringsXml ??
        `${xml}<sst ${ns} count="${strings.length}" uniqueCount="${strings.length}">${strings.map((s) => `<si><t xml:space="preserve">${esc(s)}</t></si>`).join('')}</sst>`,
    },
    { name: 'docProps/core.xml', data: `${xml}<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties"/>` },
    { name: 'docProps/app.xml', data: `${xml}<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties"/>` },
  ];
}
