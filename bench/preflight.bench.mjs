// `npm run bench preflight`: what the pre-flight pass costs. Before the first
// request, a file input is read once through the run's own reader, so that
// whatever would end the run in exit 2 halfway (a stray wide row, bytes that do
// not decode, an .xlsx output's limits) ends it before anything is paid for.
// 1M rows (BENCH_ROWS) of CSV through the offline engine without DNS — the
// fastest run there is, so the pass weighs the most here; against the API it is
// noise. Three ways, alternating, best of BENCH_ROUNDS (3):
//  - path:  `validate big.csv` (the pass, then the run);
//  - stdin: `validate - < big.csv`, the same file on stdin, which is not
//           read twice (stdin keeps its documented rule): the run without the pass;
//  - scan, read: the pass alone, in a process of its own (node and the modules
//           loaded count: about 0.1 s): the quick scan of a plain CSV, and the
//           reading of every row that an unsure scan falls back to.
import { openSync, closeSync, createWriteStream, existsSync, readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { BIN, OUT, ROOT, timed } from './lib.mjs';

const N = Number(process.env.BENCH_ROWS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ARGS = ['--engine', 'local', '--no-dns', '--no-progress', '-q'];

async function csvFile(n) {
  const path = join(OUT, `preflight-${n}.csv`);
  if (existsSync(path)) return path;
  const out = createWriteStream(path);
  out.write('id,email,name,city\n');
  for (let i = 0; i < n; i++) {
    if (!out.write(`${i},user${i}.${(i * 2654435761) % 100000}@domain${i % 10000}.example.com,"Name ${i}, Jr.",City ${i % 97}\n`)) {
      await new Promise((r) => out.once('drain', r));
    }
  }
  await new Promise((r) => out.end(r));
  return path;
}

/** timed() with the file on stdin. */
function timedStdin(args, path) {
  return new Promise((resolve, reject) => {
    const fd = openSync(path, 'r');
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { stdio: [fd, 'ignore', 'pipe'] });
    closeSync(fd);
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, ms: Number(process.hrtime.bigint() - started) / 1e6, stderr }));
  });
}

const PASS = (how) => `
import { openInput, scanCsvFile } from '${join(ROOT, 'dist/read/open-input.js')}';
import { preflight } from '${join(ROOT, 'dist/pipeline/preflight.js')}';
const path = process.argv[1];
const input = await openInput({ path });
input.close();
const scan = () => scanCsvFile({ path }, { delimiter: input.delimiter, width: input.header.length });
const how = await preflight({ open: () => openInput({ path }), ${how === 'scan' ? 'scan' : ''} });
if (how !== '${how === 'scan' ? 'scanned' : 'read'}') throw new Error('the pass went another way: ' + how);
`;

const big = await csvFile(N);
const kinds = {
  path: () => timed(process.execPath, [BIN, 'validate', big, '-o', join(OUT, 'preflight-path.csv'), ...ARGS]),
  stdin: () => timedStdin([BIN, 'validate', '-', '-o', join(OUT, 'preflight-stdin.csv'), ...ARGS], big),
  scan: () => timed(process.execPath, ['--input-type=module', '-e', PASS('scan'), big]),
  read: () => timed(process.execPath, ['--input-type=module', '-e', PASS('read'), big]),
};
const best = { path: Infinity, stdin: Infinity, scan: Infinity, read: Infinity };
for (let i = 0; i < ROUNDS; i++) {
  const order = Object.keys(kinds);
  for (let k = 0; k < i % order.length; k++) order.push(order.shift());
  for (const kind of order) {
    const r = await kinds[kind]();
    if (r.code !== 0) throw new Error(`${kind} exited ${r.code}: ${r.stderr}`);
    best[kind] = Math.min(best[kind], r.ms);
  }
}
if (readFileSync(join(OUT, 'preflight-path.csv'), 'utf8') !== readFileSync(join(OUT, 'preflight-stdin.csv'), 'utf8'))
  throw new Error('the two runs wrote different rows');
const s = (ms) => `${(ms / 1000).toFixed(2)} s`;
console.log(`${N.toLocaleString('en-US')} CSV rows, offline engine without DNS, best of ${ROUNDS}:`);
console.log(`  validate - < big.csv (no pass)   ${s(best.stdin)}`);
const change = ((best.path - best.stdin) / best.stdin) * 100;
console.log(`  validate big.csv (pass + run)    ${s(best.path)}   ${change >= 0 ? '+' : ''}${change.toFixed(0)}% (within the machine's noise when small)`);
console.log(`  the pass alone: the quick scan   ${s(best.scan)}   (a plain CSV: read/csv-scan.ts)`);
console.log(`  the pass alone: every row read   ${s(best.read)}   (what an unsure scan falls back to)`);
