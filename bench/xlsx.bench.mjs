// Excel out, then Excel in and out.
//
// 1. The writers alone (issue 30.9), each in its own process (xlsx-writers.mjs),
//    the same contacts rows with a verdict each, at two sizes: mailsift's
//    streaming writer against the strongest simple writer we could make (the
//    same sheet XML built whole and deflated in one call: no streaming, no
//    backpressure, so its memory grows with the rows) and against exceljs's
//    streaming writer (what mailsift used before). CPU time (it holds still on
//    a loaded machine; wall time does not) and peak RSS; the run fails unless
//    mailsift's sheet XML is byte-identical to the simple writer's.
// 2. Issue 17: the same rows as CSV and as .xlsx, validated through a
//    loopback server in its own process (so the engine costs nothing and the
//    reading and writing show), at two sizes: peak RSS should not grow with
//    the rows. The baseline is CSV in, CSV out — mailsift's own streaming path.
import { existsSync } from 'node:fs';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { ZipFile } from '../dist/read/zip.js';
import { BIN, OUT, ROOT, median, startServerProcess, timed } from './lib.mjs';

const N = Number(process.env.BENCH_ROWS ?? 200_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const email = (i) => `user${i}.${(i * 2654435761) % 100000}@domain${i % 10000}.example.com`;

/** `n` rows of id, name, email as CSV and as a workbook (cached across runs). */
async function inputs(n) {
  const csv = join(OUT, `xlsx-bench-${n}.csv`);
  const xlsx = join(OUT, `xlsx-bench-${n}.xlsx`);
  if (!existsSync(csv)) {
    const out = createWriteStream(csv);
    out.write('id,name,email\n');
    for (let i = 0; i < n; i++) if (!out.write(`${i},Person ${i},${email(i)}\n`)) await new Promise((r) => out.once('drain', r));
    await new Promise((r) => out.end(r));
  }
  if (!existsSync(xlsx)) {
    // as Excel writes it: distinct texts in the shared-string table
    const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: xlsx, useSharedStrings: true });
    const ws = wb.addWorksheet('contacts');
    ws.addRow(['id', 'name', 'email']).commit();
    for (let i = 0; i < n; i++) ws.addRow([i, `Person ${i}`, email(i)]).commit();
    ws.commit();
    await wb.commit();
  }
  return { csv, xlsx };
}

async function sheetXml(path) {
  const zip = await ZipFile.open(path, (reason) => new Error(`${path}: ${reason}`));
  try {
    const parts = [];
    for await (const b of zip.read(zip.entry('xl/worksheets/sheet1.xml'))) parts.push(b);
    return Buffer.concat(parts);
  } finally {
    await zip.close();
  }
}

{
  const writers = [
    ['mailsift', 6],
    ['mailsift', 1],
    ['minimal', 6],
    ['exceljs', 6],
  ];
  const label = ([w, level]) => `${w} (deflate level ${level})`;
  const sizes = [Math.round(N / 10), N];
  const runs = new Map();
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 ? [...writers].reverse() : writers;
    for (const n of sizes) {
      for (const w of order) {
        const out = join(OUT, `xlsx-writer-${w[0]}-${w[1]}.xlsx`);
        const r = await timed(process.execPath, [join(ROOT, 'bench', 'xlsx-writers.mjs'), w[0], String(n), out, String(w[1])]);
        if (r.code !== 0) throw new Error(`${label(w)} exited ${r.code}: ${r.stderr}`);
        const key = `${n} ${label(w)}`;
        runs.set(key, [...(runs.get(key) ?? []), r]);
      }
      const mine = await sheetXml(join(OUT, 'xlsx-writer-mailsift-6.xlsx'));
      const simple = await sheetXml(join(OUT, 'xlsx-writer-minimal-6.xlsx'));
      if (!mine.equals(simple)) throw new Error(`${n} rows: mailsift's sheet XML differs from the simple writer's`);
    }
  }
  console.log(`writers alone: ${sizes.join(' and ')} rows of 5 input cells and 15 verdict cells; ${ROUNDS} rounds, alternating`);
  console.log(
    'figures: median CPU time (user + system, deflate threads included), its median per-round ratio to the simple writer, peak RSS (max over rounds)',
  );
  for (const n of sizes) {
    const base = runs.get(`${n} ${label(['minimal', 6])}`);
    for (const w of writers) {
      const rs = runs.get(`${n} ${label(w)}`);
      const cpu = median(rs.map((r) => r.cpuMs));
      const vs = median(rs.map((r, i) => r.cpuMs / base[i].cpuMs));
      const peak = Math.max(...rs.map((r) => r.peakMb));
      console.log(
        `${String(n).padStart(7)} ${label(w).padEnd(28)} CPU ${(cpu / 1000).toFixed(2).padStart(6)} s  (${vs.toFixed(2)}x the simple writer)  peak RSS ${peak.toFixed(0).padStart(4)} MB`,
      );
    }
  }
}

const server = await startServerProcess(join(ROOT, 'bench', 'minimal-server.mjs'));
const env = { MAILSIFT_API_KEY: 'bench-key', MAILSIFT_BASE_URL: server.url };
try {
  const sizes = [Math.round(N / 10), N];
  const files = Object.fromEntries(await Promise.all(sizes.map(async (n) => [n, await inputs(n)])));
  const cases = [
    ['csv', 'csv'],
    ['xlsx', 'csv'],
    ['csv', 'xlsx'],
    ['xlsx', 'xlsx'],
  ];
  const results = new Map(); // "n in->out" → runs
  for (let round = 0; round < ROUNDS; round++) {
    // take turns at going first, so a drift in the machine's load favours no case
    const order = round % 2 ? [...cases].reverse() : cases;
    for (const n of sizes) {
      for (const [from, to] of order) {
        const r = await timed(process.execPath, [BIN, 'validate', files[n][from], '-o', join(OUT, `xlsx-bench-out.${to}`), '-q'], env);
        if (r.code !== 0) throw new Error(`mailsift exited ${r.code}: ${r.stderr}`);
        const key = `${n} ${from}->${to}`;
        results.set(key, [...(results.get(key) ?? []), r]);
      }
    }
  }
  const base = (n) => results.get(`${n} csv->csv`);
  console.log(`\nvalidate end to end: ${sizes.join(' and ')} rows; ${ROUNDS} rounds; figures: median wall time, median CPU time, peak RSS (max over rounds)`);
  for (const n of sizes) {
    for (const [from, to] of cases) {
      const runs = results.get(`${n} ${from}->${to}`);
      const ms = median(runs.map((r) => r.ms));
      const peak = Math.max(...runs.map((r) => r.peakMb));
      const vs = median(runs.map((r, i) => r.ms / base(n)[i].ms));
      const cpu = median(runs.map((r) => r.cpuMs));
      const cpuVs = median(runs.map((r, i) => r.cpuMs / base(n)[i].cpuMs));
      console.log(
        `${String(n).padStart(7)} ${from.padEnd(4)} -> ${to.padEnd(4)}  ${(ms / 1000).toFixed(2).padStart(6)} s  (${vs.toFixed(2)}x csv->csv)  ` +
          `CPU ${(cpu / 1000).toFixed(2)} s (${cpuVs.toFixed(2)}x)  peak RSS ${peak.toFixed(0)} MB`,
      );
    }
  }
} finally {
  await server.stop();
}
