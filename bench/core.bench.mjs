// Issue 2: the pipeline's own cost. 1M addresses through a loopback server in a
// separate process, output to a file; mailsift against a minimal client doing
// the same requests and writing the same rows, in the same run.
import { join } from 'node:path';
import { BIN, OUT, ROOT, addressFile, median, ratio, startServerProcess, timed } from './lib.mjs';

const N = Number(process.env.BENCH_ROWS ?? 1_000_000);
const CONCURRENCY = 4;
const server = await startServerProcess(join(ROOT, 'bench', 'minimal-server.mjs'));
const env = { MAILSIFT_API_KEY: 'bench-key', MAILSIFT_BASE_URL: server.url };
try {
  const big = await addressFile(N);
  const small = await addressFile(N / 10);
  const run = (input, out) =>
    timed(process.execPath, [BIN, 'validate', input, '-o', join(OUT, out), '--concurrency', String(CONCURRENCY), '--no-progress', '-q'], env);
  const baseline = () =>
    timed(process.execPath, [join(ROOT, 'bench', 'minimal-client.mjs'), server.url, 'bench-key', big, join(OUT, 'baseline.csv'), String(CONCURRENCY)]);

  // Alternate, so that machine noise hits both alike; on a shared machine one
  // run can be 30% off, so each round's ratio is taken and the median reported.
  const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
  const base = [];
  const ours = [];
  // Peak RSS varies by several MB from run to run: the small input is run as
  // often as the big one, and like is compared with like.
  const smalls = [];
  for (let i = 0; i < ROUNDS; i++) {
    base.push(await baseline());
    ours.push(await run(big, 'mailsift.csv'));
    smalls.push(await run(small, 'mailsift-small.csv'));
  }
  for (const r of [...ours, ...smalls]) if (r.code !== 0) throw new Error(`mailsift exited ${r.code}: ${r.stderr}`);
  const b = Math.min(...base.map((r) => r.ms));
  const o = Math.min(...ours.map((r) => r.ms));
  const paired = median(base.map((r, i) => r.ms / ours[i].ms));
  const peak = Math.max(...ours.map((r) => r.peakMb));
  const smallPeak = Math.max(...smalls.map((r) => r.peakMb));
  const mb = (rs) => rs.map((r) => r.peakMb.toFixed(0)).join(', ');
  const secs = (rs) => rs.map((r) => (r.ms / 1000).toFixed(2)).join(', ');
  console.log(`rows                         ${N}`);
  console.log(`minimal client (best)        ${(b / 1000).toFixed(2)} s  (${Math.round(N / (b / 1000))} addresses/s)`);
  console.log(`mailsift (best)              ${(o / 1000).toFixed(2)} s  (${Math.round(N / (o / 1000))} addresses/s)`);
  console.log(`throughput ratio             ${paired.toFixed(2)} median of ${ROUNDS} paired rounds, ${ratio(b, o)} best against best  (goal >= 0.8)`);
  console.log(`every run (wall s)           minimal: ${secs(base)}; mailsift: ${secs(ours)}`);
  console.log(`peak RSS at ${N} rows     ${peak.toFixed(0)} MB, the highest of ${ROUNDS} runs  (goal <= 200)`);
  console.log(`peak RSS at ${N / 10} rows      ${smallPeak.toFixed(0)} MB, the highest of ${ROUNDS} runs`);
  console.log(`RSS ratio ${N}/${N / 10}      ${ratio(peak, smallPeak)} highest against highest, ${ratio(median(ours.map((r) => r.peakMb)), median(smalls.map((r) => r.peakMb)))} median against median  (goal <= 1.10)`);
  console.log(`every run (peak MB)          ${N}: ${mb(ours)}; ${N / 10}: ${mb(smalls)}`);
} finally {
  await server.stop();
}
