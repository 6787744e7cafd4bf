// Issue 4: the journal's cost. 1M addresses through a loopback server in a
// separate process, with and without --journal (written per batch, fdatasync
// group-committed every 100 ms);
// then a re-run on the full journal (sends nothing, regenerates the output).
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, OUT, ROOT, addressFile, median, ratio, startServerProcess, timed } from './lib.mjs';

const N = Number(process.env.BENCH_ROWS ?? 1_000_000);
const server = await startServerProcess(join(ROOT, 'bench', 'minimal-server.mjs'));
const env = { MAILSIFT_API_KEY: 'bench-key', MAILSIFT_BASE_URL: server.url };
const journal = join(OUT, 'bench.journal');
try {
  const input = await addressFile(N);
  // The child also reports its own CPU time on exit: on a shared machine wall
  // time is noisy, CPU time much less so.
  const cpuHook = 'data:text/javascript,process.on("exit",()=>{const u=process.cpuUsage();process.stderr.write("CPU "+(u.user+u.system)/1000+"\\n")})';
  const run = (extra) =>
    timed(process.execPath, ['--import', cpuHook, BIN, 'validate', input, '-o', join(OUT, 'journal-bench.csv'), '--no-progress', '-q', ...extra], env);
  const check = (r) => {
    if (r.code !== 0) throw new Error(`mailsift exited ${r.code}: ${r.stderr}`);
    r.cpuMs = Number(/CPU ([\d.]+)/.exec(r.stderr)?.[1] ?? NaN);
    return r;
  };

  // Alternate, so that machine noise hits both alike; each round's ratio is
  // taken and the median reported (one run on a shared machine can be 30% off).
  // Rounds take turns at going first, so that a drift in the machine's load
  // does not favour one side.
  const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
  const plain = [];
  const journaled = [];
  const withJournal = async () => {
    rmSync(journal, { force: true });
    journaled.push(check(await run(['--journal', journal])));
  };
  for (let i = 0; i < ROUNDS; i++) {
    if (i % 2) await withJournal();
    plain.push(check(await run([])));
    if (i % 2 === 0) await withJournal();
  }
  const size = statSync(journal).size;
  const resumed = check(await run(['--journal', journal]));
  const p = Math.min(...plain.map((r) => r.ms));
  const j = Math.min(...journaled.map((r) => r.ms));
  const wall = median(journaled.map((r, i) => r.ms / plain[i].ms));
  const cpu = median(journaled.map((r, i) => r.cpuMs / plain[i].cpuMs));
  console.log(`rows                         ${N}`);
  console.log(`without --journal (best)     ${(p / 1000).toFixed(2)} s`);
  console.log(`with --journal (best)        ${(j / 1000).toFixed(2)} s  (journal ${(size / 1e6).toFixed(1)} MB, ${(size / N).toFixed(0)} B/verdict)`);
  console.log(`wall-time ratio              ${wall.toFixed(2)} median of ${ROUNDS} paired rounds, ${ratio(j, p)} best against best  (goal <= 1.10)`);
  console.log(`CPU-time ratio               ${cpu.toFixed(2)} median of ${ROUNDS} paired rounds (the same cost, less exposed to machine noise)`);
  const secs = (rs) => rs.map((r) => (r.ms / 1000).toFixed(2)).join(', ');
  console.log(`every run (wall s)           without: ${secs(plain)}; with: ${secs(journaled)}`);
  console.log(`re-run on the full journal   ${(resumed.ms / 1000).toFixed(2)} s, sends nothing, peak RSS ${resumed.peakMb.toFixed(0)} MB`);
} finally {
  rmSync(journal, { force: true });
  await server.stop();
}
