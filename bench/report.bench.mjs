// --report's cost: the same run with and without it, 1M rows whose every
// address has its own domain (the worst case for the top-domains counter,
// which must stay within its slots), through the loopback bench server.
import { createWriteStream, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, OUT, ROOT, median, ratio, startServerProcess, timed } from './lib.mjs';

const N = Number(process.env.BENCH_ROWS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

async function distinctDomains(n) {
  const path = join(OUT, `distinct-domains-${n}.txt`);
  if (existsSync(path)) return path;
  const out = createWriteStream(path);
  for (let i = 0; i < n; i++) if (!out.write(`user${i}@d${i}.example.com\n`)) await new Promise((r) => out.once('drain', r));
  await new Promise((r) => out.end(r));
  return path;
}

const server = await startServerProcess(join(ROOT, 'bench', 'minimal-server.mjs'));
const env = { MAILSIFT_API_KEY: 'bench-key', MAILSIFT_BASE_URL: server.url };
try {
  const input = await distinctDomains(N);
  const report = join(OUT, 'report.html');
  const run = (extra) => timed(process.execPath, [BIN, 'validate', input, '-o', join(OUT, 'report-run.csv'), '--no-progress', '-q', ...extra], env);
  const without = [];
  const withReport = [];
  // alternated, so that machine noise hits both alike
  for (let i = 0; i < ROUNDS; i++) {
    without.push(await run([]));
    withReport.push(await run(['--report', report]));
  }
  for (const r of [...without, ...withReport]) if (r.code !== 0) throw new Error(`mailsift exited ${r.code}: ${r.stderr}`);
  const secs = (rs) => rs.map((r) => (r.ms / 1000).toFixed(2)).join(', ');
  const mb = (rs) => rs.map((r) => r.peakMb.toFixed(0)).join(', ');
  console.log(`rows (each its own domain)   ${N}`);
  console.log(
    `time ratio with/without      ${median(withReport.map((r, i) => r.ms / without[i].ms)).toFixed(2)} median of ${ROUNDS} paired rounds  (goal <= 1.05)`,
  );
  console.log(`peak RSS ratio with/without  ${ratio(median(withReport.map((r) => r.peakMb)), median(without.map((r) => r.peakMb)))} median against median`);
  console.log(`every run (wall s)           without: ${secs(without)}; with: ${secs(withReport)}`);
  console.log(`every run (peak MB)          without: ${mb(without)}; with: ${mb(withReport)}`);
  console.log(`report size                  ${(statSync(report).size / 1024).toFixed(0)} KB`);
} finally {
  await server.stop();
}
