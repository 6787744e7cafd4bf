// One .xlsx writer writing `rows` rows of a contacts sheet with a verdict each,
// in its own process (so its CPU time and peak RSS are its own), for
// xlsx.bench.mjs. Usage: node xlsx-writers.mjs WRITER ROWS OUT [LEVEL]
//   mailsift  dist/write/xlsx-writer.js, streamed (the writer under test)
//   minimal   the same sheet XML built whole and deflated in one call: the
//             strongest simple writer (no streaming, no backpressure), whose
//             memory grows with the rows
//   exceljs   exceljs's streaming WorkbookWriter, inline strings: the writer
//             mailsift used before
import { createWriteStream, writeFileSync } from 'node:fs';

import { crc32, deflateRawSync } from 'node:zlib';

const [writer, rowsArg, out, levelArg] = process.argv.slice(2);
const N = Number(rowsArg);
const LEVEL = Number(levelArg ?? 6);
const HEADER = ['id', 'name', 'email', 'phone', 'zip'];
// the columns mailsift appends, from the build as the other writers' parts are (dist/ is made by `npm run bench`)
const { VERDICT_COLUMNS } = await import('../dist/write/verdict-columns.js');

/** the input cells of row i: as a contacts export holds them */
const fields = (i) => [
  String(i),
  `Person ${i}`,
  `user${i}.${(i * 2654435761) % 100000}@domain${i % 10000}.example.com`,
  `+1 555 ${String(i % 10000).padStart(4, '0')}`,
  String(i % 100000).padStart(5, '0'),
];
const verdict = (i) => ({
  email: fields(i)[2],
  isValid: i % 5 !== 0,
  status: i % 5 !== 0 ? 'valid' : 'invalid',
  confidence: i % 5 !== 0 ? 0.9 : 0.1,
  provider: 'bench',
  details: { syntax: true, domain: `domain${i % 10000}.example.com`, mx: true, disposable: false, role: false, free: false },
});
const values = (i) => {
  const v = verdict(i);
  return [
    ...fields(i),
    v.status,
    v.status === 'valid' ? undefined : 'rejected',
    v.isValid,
    v.confidence,
    v.provider,
    true,
    v.details.domain,
    true,
    false,
    false,
    false,
  ];
};

if (writer === 'mailsift') {
  const { createXlsxWriter } = await import('../dist/write/xlsx-writer.js');
  const { ALL_COLUMNS } = await import('../dist/write/output-plan.js');
  const { emptySummary } = await import('../dist/summary.js');
  const dest = createWriteStream(out);
  const w = await createXlsxWriter(dest, out, HEADER, ALL_COLUMNS, { level: LEVEL });
  await w.begin();
  for (let i = 0; i < N; i++) {
    w.row(fields(i), verdict(i));
    // the pipeline hands rows on after each answer: here every 1000 rows
    if (i % 1000 === 999) await w.drain();
  }
  await w.end(emptySummary('api'));
} else if (writer === 'minimal') {
  const { SHEET_START, SHEET_END, SHEET_PATH, workbookParts, columnLetters, escapeCellText } = await import('../dist/write/xlsx-xml.js');
  const letters = Array.from({ length: 20 }, (_, i) => columnLetters(i));
  const cell = (ref, v) =>
    v === undefined || v === ''
      ? ''
      : typeof v === 'number'
        ? `<c r="${ref}"><v>${v}</v></c>`
        : typeof v === 'boolean'
          ? `<c r="${ref}" t="b"><v>${v ? 1 : 0}</v></c>`
          : `<c r="${ref}" t="inlineStr"><is><t xml:space="preserve">${escapeCellText(v)}</t></is></c>`;
  const row = (r, cells) => `<row r="${r}">${cells.map((v, c) => cell(letters[c] + r, v)).join('')}</row>`;
  const parts = [SHEET_START, row(1, [...HEADER, ...VERDICT_COLUMNS])];
  for (let i = 0; i < N; i++) parts.push(row(i + 2, values(i)));
  parts.push(SHEET_END);
  writeFileSync(out, storedZip([...workbookParts('verdicts'), [SHEET_PATH, parts.join('')]]));
} else if (writer === 'exceljs') {
  const ExcelJS = (await import('exceljs')).default;
  const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: createWriteStream(out), useStyles: false, useSharedStrings: false });
  const ws = wb.addWorksheet('verdicts');
  ws.addRow([...HEADER, ...VERDICT_COLUMNS]).commit();
  for (let i = 0; i < N; i++) ws.addRow(values(i).map((v) => (v === undefined || v === '' ? null : v))).commit();
  ws.commit();
  await wb.commit();
} else {
  throw new Error(`no writer ${writer}`);
}

/** A zip of deflated parts, each known whole: headers with their sizes, then the directory. */
function storedZip(parts) {
  const out = [];
  const dir = [];
  let offset = 0;
  for (const [name, text] of parts) {
    const data = Buffer.from(text);
    const body = deflateRawSync(data, { level: LEVEL });
    const n = Buffer.from(name);
    const h = Buffer.alloc(30);
    h.writeUInt32LE(0x04034b50, 0);
    h.writeUInt16LE(20, 4);
    h.writeUInt16LE(8, 8);
    h.writeUInt16LE(33, 12);
    h.writeUInt32LE(crc32(data), 14);
    h.writeUInt32LE(body.length, 18);
    h.writeUInt32LE(data.length, 22);
    h.writeUInt16LE(n.length, 26);
    const d = Buffer.alloc(46);
    d.writeUInt32LE(0x02014b50, 0);
    d.writeUInt16LE(20, 4);
    d.writeUInt16LE(20, 6);
    d.writeUInt16LE(8, 10);
    d.writeUInt16LE(33, 14);
    d.writeUInt32LE(crc32(data), 16);
    d.writeUInt32LE(body.length, 20);
    d.writeUInt32LE(data.length, 24);
    d.writeUInt16LE(n.length, 28);
    d.writeUInt32LE(offset, 42);
    out.push(h, n, body);
    dir.push(d, n);
    offset += 30 + n.length + body.length;
  }
  const size = dir.reduce((s, b) => s + b.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(parts.length, 8);
  end.writeUInt16LE(parts.length, 10);
  end.writeUInt32LE(size, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...out, ...dir, end]);
}
