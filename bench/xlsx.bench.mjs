// Issue 17: Excel in and out. The same rows as CSV and as .xlsx, validated
// through a loopback server in its own process (so the engine costs nothing
// and the reading and writing show), at two sizes: peak RSS should not grow
// with the rows. The baseline is CSV in, CSV out — mailsift's own streaming path.
import { existsSync } from 'node:fs';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
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

const server = await startServerProcess(join(ROOT, 'bench', 'minimal-server.mjs'));
const env = { MAILSIFT_API_KEY: 'bench-key', MAILSIFT_BASE_URL: server.url };
try {
  const sizes = [Math.round(N / 10), N];
  const files = Object.fromEntries(await Promise.all(sizes.map(async (n) => [n, await inputs(n)])));
  const cases = [['csv', 'csv'], ['xlsx', 'csv'], ['csv', 'xlsx'], ['xlsx', 'xlsx']];
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
  console.log(`rows: ${sizes.join(' and ')}; ${ROUNDS} rounds; figures: median wall time, peak RSS (max over rounds)`);
  for (const n of sizes) {
    for (const [from, to] of cases) {
      const runs = results.get(`${n} ${from}->${to}`);
      const ms = median(runs.map((r) => r.ms));
      const peak = Math.max(...runs.map((r) => r.peakMb));
      const vs = median(runs.map((r, i) => r.ms / base(n)[i].ms));
      console.log(`${String(n).padStart(7)} ${from.padEnd(4)} -> ${to.padEnd(4)}  ${(ms / 1000).toFixed(2).padStart(6)} s  (${vs.toFixed(2)}x csv->csv)  peak RSS ${peak.toFixed(0)} MB`);
    }
  }
} finally {
  await server.stop();
}
