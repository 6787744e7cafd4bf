// `npm run bench throughput`: the pipeline's own cost. 1M addresses (BENCH_ROWS)
// through a loopback server in its own process, output to a file. The server is
// light (bench/light-server.mjs: every answer rendered before the clock starts)
// so that the client's own CPU shows; BENCH_SERVER=render uses the server that
// renders each answer (bench/minimal-server.mjs), as earlier sessions measured. mailsift
// against the strongest minimal client we could write (bench/minimal-client.mjs:
// keep-alive pool, the same 1000-address batches, 8 requests in flight as
// issue 33's yardstick, the same CSV rows), over node:http and over undici —
// the faster of the two is the baseline. mailsift runs pinned at 8 in flight
// and with its default (--concurrency auto). Runs alternate, so that machine
// noise hits all alike; best of BENCH_ROUNDS (3), and peak RSS. Keep each
// session's figures in docs/development.md (the table under "How fast").
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, OUT, ROOT, addressFile, cpuTicksOf, median, ratio, startServerProcess, timed } from './lib.mjs';

const N = Number(process.env.BENCH_ROWS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = 8;
const SERVER = process.env.BENCH_SERVER ?? 'light';
const big = await addressFile(N);
const small = await addressFile(N / 10);
const server =
  SERVER === 'render'
    ? await startServerProcess(join(ROOT, 'bench', 'minimal-server.mjs'))
    : await startServerProcess(join(ROOT, 'bench', 'light-server.mjs'), [big]);
const env = { MAILSIFT_API_KEY: 'bench-key', MAILSIFT_BASE_URL: server.url };

/**
 * Runs `fn` and adds the server's CPU time over it: a run is only as fast as both
 * sides. With the light server, also the run's phases: from the spawn to the
 * first request (start-up, reading, the pre-flight), the requests, and from the
 * last answer to the exit (the rest of the output, its fsync and rename).
 */
async function withServerCpu(fn) {
  const before = cpuTicksOf(server.pid);
  const r = await fn();
  const out = { ...r, serverCpuMs: (cpuTicksOf(server.pid) - before) * 10 };
  if (SERVER === 'light') {
    const { firstAt, lastAt } = await (await fetch(`${server.url}/bench/phases`)).json();
    out.phases = { toFirst: firstAt - r.startedAt, requests: lastAt - firstAt, afterLast: r.endedAt - lastAt };
  }
  return out;
}

try {
  const ours =
    (input, out, concurrency = String(CONCURRENCY)) =>
    () =>
      withServerCpu(() => timed(process.execPath, [BIN, 'validate', input, '-o', join(OUT, out), '--concurrency', concurrency, '--no-progress', '-q'], env));
  const minimal = (transport) => () =>
    withServerCpu(() =>
      timed(process.execPath, [
        join(ROOT, 'bench', 'minimal-client.mjs'),
        server.url,
        'bench-key',
        big,
        join(OUT, `baseline-${transport}.csv`),
        String(CONCURRENCY),
        transport,
      ]),
    );
  const kinds = {
    http: minimal('http'),
    undici: minimal('undici'),
    mailsift: ours(big, 'mailsift.csv'),
    auto: ours(big, 'mailsift-auto.csv', 'auto'),
    small: ours(small, 'mailsift-small.csv'),
  };
  const runs = { http: [], undici: [], mailsift: [], auto: [], small: [] };
  for (let i = 0; i < ROUNDS; i++) {
    // The order turns each round, so that no one always runs after the same neighbour.
    const order = ['http', 'undici', 'mailsift', 'auto'];
    for (let k = 0; k < i % 4; k++) order.push(order.shift());
    for (const kind of [...order, 'small']) {
      const r = await kinds[kind]();
      if (r.code !== 0) throw new Error(`${kind} exited ${r.code}: ${r.stderr}`);
      runs[kind].push(r);
    }
  }
  // Not a benchmark unless the rows are the same.
  const written = readFileSync(join(OUT, 'mailsift.csv'));
  for (const t of ['baseline-http', 'baseline-undici', 'mailsift-auto']) {
    if (!written.equals(readFileSync(join(OUT, `${t}.csv`)))) throw new Error(`mailsift's CSV differs from ${t}.csv`);
  }

  const best = (rs) => Math.min(...rs.map((r) => r.ms));
  const baseKind = best(runs.http) <= best(runs.undici) ? 'http' : 'undici';
  const base = runs[baseKind];
  const b = best(base);
  const o = best(runs.mailsift);
  const paired = (rs) => base.map((r, i) => (r.ms / rs[i].ms).toFixed(2)).join(', ');
  const peak = Math.max(...runs.mailsift.map((r) => r.peakMb), ...runs.auto.map((r) => r.peakMb));
  const smallPeak = Math.max(...runs.small.map((r) => r.peakMb));
  const s = (ms) => (ms / 1000).toFixed(2);
  const us = (ms) => ((ms * 1000) / N).toFixed(2);
  const line = (name, rs) =>
    console.log(
      `${name.padEnd(28)} best ${s(best(rs))} s (${Math.round(N / (best(rs) / 1000))} addresses/s); wall ${rs.map((r) => s(r.ms)).join(', ')} s; ` +
        `CPU ${rs.map((r) => s(r.cpuMs)).join(', ')} s (${rs.map((r) => us(r.cpuMs)).join(', ')} µs an address), ` +
        `of which the main thread ${rs.map((r) => s(r.mainCpuMs)).join(', ')} s; ` +
        `server CPU ${rs.map((r) => s(r.serverCpuMs)).join(', ')} s; peak ${rs.map((r) => r.peakMb.toFixed(0)).join(', ')} MB`,
    );
  const phases = (name, rs) => {
    if (!rs[0].phases) return;
    const p = (k) => rs.map((r) => s(r.phases[k])).join(', ');
    console.log(`  ${name.padEnd(26)} to the first request ${p('toFirst')} s; requests ${p('requests')} s; after the last answer ${p('afterLast')} s`);
  };
  console.log(`rows                         ${N}, ${ROUNDS} rounds, ${CONCURRENCY} requests in flight, ${SERVER} server`);
  line('minimal client, node:http', runs.http);
  line('minimal client, undici', runs.undici);
  line(`mailsift --concurrency ${CONCURRENCY}`, runs.mailsift);
  line('mailsift --concurrency auto', runs.auto);
  console.log('phases of each run (wall time)');
  phases('minimal client, node:http', runs.http);
  phases('minimal client, undici', runs.undici);
  phases(`mailsift --concurrency ${CONCURRENCY}`, runs.mailsift);
  phases('mailsift --concurrency auto', runs.auto);
  console.log(
    `throughput ratio             ${ratio(b, o)} best against best (baseline: the ${baseKind} client)  (goal >= 0.85); ` + `per round ${paired(runs.mailsift)}`,
  );
  console.log(`  with --concurrency auto    ${ratio(b, best(runs.auto))} best against best; per round ${paired(runs.auto)}`);
  const cpu = (rs) => Math.min(...rs.map((r) => r.cpuMs));
  // The CPU baseline is the leaner of the two minimal clients, whichever was faster.
  const cpuKind = cpu(runs.http) <= cpu(runs.undici) ? 'http' : 'undici';
  const cpuBase = runs[cpuKind];
  const cpuPaired = (rs) => cpuBase.map((r, i) => (rs[i].cpuMs / r.cpuMs).toFixed(2)).join(', ');
  console.log(
    `CPU an address               mailsift ${ratio(cpu(runs.mailsift), cpu(cpuBase))}× the ${cpuKind} client's, least against least (client processes only; goal <= 1.25); ` +
      `per round ${cpuPaired(runs.mailsift)}; with auto ${ratio(cpu(runs.auto), cpu(cpuBase))}× (per round ${cpuPaired(runs.auto)})`,
  );
  console.log(`peak RSS at ${N} rows     ${peak.toFixed(0)} MB, the highest of ${ROUNDS} runs  (goal <= 200)`);
  console.log(
    `peak RSS at ${N / 10} rows      ${smallPeak.toFixed(0)} MB; so about ${Math.round(((median(runs.mailsift.map((r) => r.peakMb)) - median(runs.small.map((r) => r.peakMb))) * 1048576) / (N * 0.9))} bytes per distinct address (medians)`,
  );
} finally {
  await server.stop();
}
