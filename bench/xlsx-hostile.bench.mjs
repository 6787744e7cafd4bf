// Hostile and huge workbooks: peak RSS and time of reading each (the reader
// alone, bench/read-input.mjs) and of `mailsift validate` on it. Every file must
// be read within bounded memory (peak RSS under 512 MB for a 100 MB file) or
// refused with exit 2 naming the limit.
//   20M-deep   a sheet of 20 million nested elements (a few hundred KB on disk)
//   70M-ss     70 million one-letter shared strings (a few MB on disk)
//   100MB      a real sheet of ~100 MB compressed (2.4M rows, inline strings)
// BENCH_BIG_ROWS changes the size of the last one.
import { closeSync, existsSync, openSync, renameSync, statSync, writeSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { crc32, createDeflateRaw } from 'node:zlib';
import { BIN, OUT, ROOT, timed } from './lib.mjs';

const BIG_ROWS = Number(process.env.BENCH_BIG_ROWS ?? 2_400_000);
const NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

/** Writes a zip whose parts' bytes come from generators of strings, deflated as they come. */
async function writeZip(path, parts) {
  const tmp = `${path}.part`;
  const fd = openSync(tmp, 'w');
  let offset = 0;
  const put = (b) => {
    writeSync(fd, b);
    offset += b.length;
  };
  const central = [];
  for (const { name, pieces } of parts) {
    const nameBytes = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x808, 6); // sizes in a data descriptor after the data
    local.writeUInt16LE(8, 8);
    local.writeUInt16LE(nameBytes.length, 26);
    const at = offset;
    put(local);
    put(nameBytes);
    const d = createDeflateRaw({ level: 6 });
    let crc = 0;
    let size = 0;
    let csize = 0;
    const drained = (async () => {
      for await (const c of d) {
        put(c);
        csize += c.length;
      }
    })();
    for (const piece of pieces()) {
      const b = Buffer.from(piece);
      crc = crc32(b, crc);
      size += b.length;
      if (!d.write(b)) await once(d, 'drain');
    }
    d.end();
    await drained;
    const desc = Buffer.alloc(16);
    desc.writeUInt32LE(0x08074b50, 0);
    desc.writeUInt32LE(crc >>> 0, 4);
    desc.writeUInt32LE(csize, 8);
    desc.writeUInt32LE(size, 12);
    put(desc);
    const dir = Buffer.alloc(46);
    dir.writeUInt32LE(0x02014b50, 0);
    dir.writeUInt16LE(20, 4);
    dir.writeUInt16LE(20, 6);
    dir.writeUInt16LE(0x808, 8);
    dir.writeUInt16LE(8, 10);
    dir.writeUInt32LE(crc >>> 0, 16);
    dir.writeUInt32LE(csize, 20);
    dir.writeUInt32LE(size, 24);
    dir.writeUInt16LE(nameBytes.length, 28);
    dir.writeUInt32LE(at, 42);
    central.push(dir, nameBytes);
  }
  const dirBytes = Buffer.concat(central);
  const dirAt = offset;
  put(dirBytes);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(parts.length, 8);
  end.writeUInt16LE(parts.length, 10);
  end.writeUInt32LE(dirBytes.length, 12);
  end.writeUInt32LE(dirAt, 16);
  put(end);
  closeSync(fd);
  renameSync(tmp, path);
}

/** A one-sheet workbook around a sheet body and (optionally) a shared-string body. */
function workbook(sheetPieces, sharedPieces) {
  const one = (s) => () => [s];
  return [
    { name: '[Content_Types].xml', pieces: one('<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>') },
    {
      name: '_rels/.rels',
      pieces: one(
        `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
      ),
    },
    { name: 'xl/workbook.xml', pieces: one(`<workbook ${NS}><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>`) },
    {
      name: 'xl/_rels/workbook.xml.rels',
      pieces: one(
        `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/worksheet" Target="worksheets/sheet1.xml"/>` +
          (sharedPieces ? `<Relationship Id="rId2" Type="${REL}/sharedStrings" Target="sharedStrings.xml"/>` : '') +
          '</Relationships>',
      ),
    },
    { name: 'xl/worksheets/sheet1.xml', pieces: sheetPieces },
    ...(sharedPieces ? [{ name: 'xl/sharedStrings.xml', pieces: sharedPieces }] : []),
  ];
}

function* repeat(piece, times, head = '', tail = '') {
  yield head;
  const block = piece.repeat(Math.max(1, Math.floor(65536 / piece.length)));
  const perBlock = block.length / piece.length;
  let left = times;
  for (; left >= perBlock; left -= perBlock) yield block;
  yield piece.repeat(left);
  yield tail;
}

const header = '<row r="1"><c r="A1" t="inlineStr"><is><t>email</t></is></c><c r="B1" t="inlineStr"><is><t>note</t></is></c></row>';
const files = {
  '20M-deep': () => workbook(() => repeat('<a>', 20_000_000, `<worksheet ${NS}><sheetData>${header}<row r="2">`, '</row></sheetData></worksheet>')),
  '70M-ss': () =>
    workbook(
      () => [`<worksheet ${NS}><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c></row></sheetData></worksheet>`],
      () => repeat('<si><t>a</t></si>', 70_000_000, `<sst ${NS}>`, '</sst>'),
    ),
  '100MB': () =>
    workbook(function* () {
      yield `<worksheet ${NS}><sheetData>${header}`;
      let x = 0x9e3779b9;
      const hex = () => {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        return (x >>> 0).toString(16).padStart(8, '0');
      };
      let block = '';
      for (let r = 2; r <= BIG_ROWS + 1; r++) {
        block += `<row r="${r}"><c r="A${r}" t="inlineStr"><is><t>user${r % 10000}@domain${r % 97}.example.com</t></is></c><c r="B${r}" t="inlineStr"><is><t>${hex()}${hex()}${hex()}${hex()}${hex()}${hex()}${hex()}</t></is></c></row>`;
        if (block.length > 65536) {
          yield block;
          block = '';
        }
      }
      yield `${block}</sheetData></worksheet>`;
    }),
};

console.log('file        on disk   reader: exit  time  peak RSS | mailsift validate: exit  time  peak RSS | message');
for (const [name, parts] of Object.entries(files)) {
  const path = join(OUT, `hostile-${name}${name === '100MB' ? `-${BIG_ROWS}` : ''}.xlsx`);
  if (!existsSync(path)) await writeZip(path, parts());
  const mb = (statSync(path).size / 1024 / 1024).toFixed(1);
  const reader = await timed(process.execPath, [join(ROOT, 'bench', 'read-input.mjs'), path]);
  const cli = await timed(process.execPath, [
    BIN,
    'validate',
    path,
    '-o',
    join(OUT, 'hostile-out.csv'),
    '-q',
    '--engine',
    'local',
    '--dns-server',
    '127.0.0.1:9',
    '--dns-timeout',
    '50',
  ]);
  const line = (r) => `${String(r.code).padStart(4)} ${(r.ms / 1000).toFixed(1).padStart(6)} s ${r.peakMb.toFixed(0).padStart(5)} MB`;
  console.log(`${name.padEnd(10)} ${mb.padStart(7)} MB  ${line(reader)} | ${line(cli)} | ${(cli.stderr.trim().split('\n').pop() ?? '').slice(0, 110)}`);
  if (reader.peakMb > 512 || cli.peakMb > 512) process.exitCode = 1;
  if (![0, 2].includes(reader.code) || ![0, 2].includes(cli.code)) process.exitCode = 1;
}
