#!/usr/bin/env node
// Adaptive concurrency (--concurrency auto, the default) against the fault
// server playing three kinds of API, each figure a ratio to its ideal:
//  (a) a plan that binds: 3 s latency, 20 requests per 10 s, 40k addresses →
//      wall ≤ 1.2× the best schedule the window edges allow, no 429;
//  (b) a roomy plan: 400 ms latency, 1000 requests/s, 200k addresses → at least
//      0.8× a simple client with 16 in flight (bench/minimal-client.mjs), runs
//      alternating; mailsift pinned at 16 is shown too;
//  (c) a server at capacity, 200 ms latency, 200k addresses, in two shapes:
//      6 served and 6 waiting (503 beyond 12), and 10 served and 2 waiting (503
//      beyond 12, with little queue to warn) → ≤ 5% of requests answered 503,
//      wall ≤ 1.3× the time the capacity allows, in each; mailsift pinned at 12
//      (the most that draws no 503) runs alternately, to show what the machine
//      allows any client.
// Each case prints the requests in the server over time (the limit's trace, as
// the server saw it). Wall times are the whole process, start-up included.
// Needs `npm run build` first (npm run bench does it). Takes about four minutes.
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { addressFile, BIN, median, OUT, ROOT, startServerProcess, timed } from './lib.mjs';

const SERVER = join(ROOT, 'test', 'support', 'fault-server.mjs');
const MINIMAL = join(ROOT, 'bench', 'minimal-client.mjs');
const KEY = 'bench-adaptive-key';
const BATCH = 1000;
// ADAPTIVE_ROUNDS=3 for more runs per case; ADAPTIVE_CASES=b,c for some of them
const ROUNDS = Number(process.env.ADAPTIVE_ROUNDS ?? 2);
const CASES = (process.env.ADAPTIVE_CASES ?? 'a,b,c').split(',');

async function server(args) {
  const s = await startServerProcess(SERVER, ['--api-key', KEY, ...args]);
  return { ...s, stats: async () => (await fetch(`${s.url}/__stats`)).json() };
}

/** mailsift validate with no --concurrency (or the flags given): wall, summary, limit changes, server stats. */
async function mailsift(serverArgs, input, flags = []) {
  const srv = await server(serverArgs);
  const summaryFile = join(OUT, 'adaptive-summary.json');
  const r = await timed(
    process.execPath,
    [
      BIN,
      'validate',
      input,
      '-o',
      join(OUT, 'adaptive-out.csv'),
      '--batch-size',
      String(BATCH),
      '--summary',
      summaryFile,
      '--no-progress',
      '--verbose',
      ...flags,
    ],
    { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: srv.url },
  );
  const stats = await srv.stats();
  await srv.stop();
  if (r.code !== 0)
    throw new Error(
      `mailsift exited ${r.code}: ${r.stderr
        .split('\n')
        .filter((l) => !l.includes('> POST') && !l.includes('< HTTP'))
        .slice(-5)
        .join('\n')}`,
    );
  const summary = JSON.parse(readFileSync(summaryFile, 'utf8'));
  const limits = [...r.stderr.matchAll(/in flight: limit (\d+) → (\d+)/g)].map((m) => Number(m[2]));
  return { ms: r.ms, summary, stats, limits };
}

async function minimal(serverArgs, input, concurrency) {
  const srv = await server(serverArgs);
  const r = await timed(process.execPath, [MINIMAL, srv.url, KEY, input, join(OUT, 'adaptive-minimal.csv'), String(concurrency)]);
  const stats = await srv.stats();
  await srv.stop();
  if (r.code !== 0) throw new Error(`minimal client exited ${r.code}: ${r.stderr.slice(0, 300)}`);
  return { ms: r.ms, stats };
}

/** The best schedule a fixed-window plan allows: the probe, the rest of its window when it answers, then each window in full. */
function planIdeal(requests, limit, windowMs, latencyMs) {
  let left = requests - 1;
  let last = 0; // when the last request leaves
  if (left > 0 && latencyMs < windowMs) {
    last = latencyMs;
    left -= limit - 1;
  }
  for (let w = 1; left > 0; w++) {
    last = w * windowMs;
    left -= limit;
  }
  return last + latencyMs;
}

/** Requests in the server over time, as a small text plot: `width` columns, each the most in flight during its slice. */
function plot(trace, width = 60, height = 6) {
  if (trace.length === 0) return '  (no requests)';
  const end = trace.at(-1)[0] || 1;
  const cols = new Array(width).fill(0);
  let current = 0;
  let i = 0;
  for (let c = 0; c < width; c++) {
    const sliceEnd = ((c + 1) * end) / width;
    let most = current;
    while (i < trace.length && trace[i][0] <= sliceEnd) {
      current = trace[i][1];
      most = Math.max(most, current);
      i++;
    }
    cols[c] = most;
  }
  const peak = Math.max(...cols, 1);
  const lines = [];
  for (let row = height; row >= 1; row--) {
    const level = (row / height) * peak;
    const label = row === height ? String(peak).padStart(3) : row === 1 ? '  1' : '   ';
    lines.push(`  ${label} │${cols.map((v) => (v >= level - peak / height / 2 && v > 0 ? '█' : ' ')).join('')}`);
  }
  lines.push(`      └${'─'.repeat(width)}`);
  lines.push(`       0 s${' '.repeat(width - 12)}${(end / 1000).toFixed(1)} s`);
  return lines.join('\n');
}

const fmt = (ms) => `${(ms / 1000).toFixed(2)} s`;
const limitsLine = (limits) => (limits.length ? `limit 1 → ${limits.join(' → ')}` : 'limit unchanged');
let failed = false;
// the machine may be shared: say how busy it was, so a figure can be weighed
const load = () => `load average ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores`;
console.log(`${load()} at the start`);

// (a) a plan that binds
if (CASES.includes('a')) {
  const N = 40_000;
  const [LIMIT, WINDOW, LATENCY] = [20, 10_000, 3000];
  const input = await addressFile(N);
  const ideal = planIdeal(Math.ceil(N / BATCH), LIMIT, WINDOW, LATENCY);
  console.log(
    `\n(a) a plan that binds: ${LATENCY / 1000} s latency, ${LIMIT} requests per ${WINDOW / 1000} s, ${N.toLocaleString('en')} addresses; ideal ${fmt(ideal)}`,
  );
  const runs = [];
  for (let k = 0; k < ROUNDS; k++) {
    const r = await mailsift(['--delay-ms', String(LATENCY), '--rate-limit', `${LIMIT}/${WINDOW}`], input);
    runs.push(r);
    console.log(
      `  run ${k + 1}: ${fmt(r.ms)} = ${(r.ms / ideal).toFixed(2)}× ideal · ${r.stats.count429} 429s · ${r.stats.requests} requests · ` +
        `in flight peak ${r.summary.concurrency.peak}, mean ${r.summary.concurrency.mean} · ${limitsLine(r.limits)}`,
    );
  }
  const ratio = median(runs.map((r) => r.ms)) / ideal;
  const ok = ratio <= 1.2 && runs.every((r) => r.stats.count429 === 0);
  failed ||= !ok;
  console.log(`  median ${ratio.toFixed(2)}× ideal (goal ≤ 1.20, no 429): ${ok ? 'met' : 'NOT met'}`);
  console.log(plot(runs.at(-1).stats.trace));
}

// (b) a roomy plan, against a simple client with 16 in flight
if (CASES.includes('b')) {
  const N = 200_000;
  const args = ['--delay-ms', '400', '--rate-limit', '1000/1000'];
  const input = await addressFile(N);
  console.log(`\n(b) a roomy plan: 400 ms latency, 1000 requests/s, ${N.toLocaleString('en')} addresses; alternating with a simple client at 16 in flight`);
  const auto = [];
  const simple = [];
  const pinned = [];
  let last;
  for (let k = 0; k < ROUNDS + 1; k++) {
    const s = await minimal(args, input, 16);
    simple.push(s.ms);
    last = await mailsift(args, input);
    auto.push(last.ms);
    const p = await mailsift(args, input, ['--concurrency', '16']);
    pinned.push(p.ms);
    console.log(
      `  round ${k + 1}: auto ${fmt(last.ms)} (peak ${last.summary.concurrency.peak}, mean ${last.summary.concurrency.mean}, ${last.stats.count429} 429s) · ` +
        `simple-16 ${fmt(s.ms)} · mailsift pinned 16 ${fmt(p.ms)} · ${limitsLine(last.limits)}`,
    );
  }
  const ratio = median(simple) / median(auto);
  const ok = ratio >= 0.8;
  failed ||= !ok;
  console.log(
    `  throughput of auto / simple-16: ${ratio.toFixed(2)} (goal ≥ 0.80): ${ok ? 'met' : 'NOT met'} · auto / mailsift pinned 16: ${(median(pinned) / median(auto)).toFixed(2)}`,
  );
  console.log(plot(last.stats.trace));
}

// (c) a server at capacity, in two shapes: the one the bench has always had (6 served,
// 6 more waiting, 503 past 12), and one with little room to queue (10 served, 2 waiting,
// 503 past 12): latency gives almost no warning there before the refusals begin
if (CASES.includes('c')) {
  const N = 200_000;
  const LATENCY = 200;
  const input = await addressFile(N);
  const requests = Math.ceil(N / BATCH);
  for (const [CAPACITY, QUEUE] of [
    [6, 6],
    [10, 2],
  ]) {
    const ideal = Math.ceil(requests / CAPACITY) * LATENCY;
    const most = CAPACITY + QUEUE;
    console.log(
      `\n(c) a server at capacity: ${CAPACITY} served at once, ${QUEUE} more wait, 503 beyond ${most}; ${LATENCY} ms latency, ` +
        `${N.toLocaleString('en')} addresses; ideal ${fmt(ideal)}`,
    );
    const runs = [];
    const reference = [];
    const serverArgs = ['--delay-ms', String(LATENCY), '--capacity', String(CAPACITY), '--queue', String(QUEUE)];
    for (let k = 0; k < ROUNDS; k++) {
      // alternating with mailsift pinned at the most that never draws a 503 and keeps the server full:
      // how close the machine lets any client come to the ideal
      const p = await mailsift(serverArgs, input, ['--concurrency', String(most)]);
      reference.push(p.ms);
      const r = await mailsift(serverArgs, input);
      runs.push(r);
      const refused = r.stats.byStatus['503'] ?? 0;
      console.log(
        `  run ${k + 1}: ${fmt(r.ms)} = ${(r.ms / ideal).toFixed(2)}× ideal · ${refused} of ${r.stats.requests} requests answered 503 ` +
          `(${((100 * refused) / r.stats.requests).toFixed(1)}%) · in the server at most ${r.stats.peakInFlight} · ` +
          `in flight peak ${r.summary.concurrency.peak}, mean ${r.summary.concurrency.mean} · ${limitsLine(r.limits)} · ` +
          `pinned ${most}: ${fmt(p.ms)} = ${(p.ms / ideal).toFixed(2)}× ideal`,
      );
    }
    const ratio = median(runs.map((r) => r.ms)) / ideal;
    const share = Math.max(...runs.map((r) => (r.stats.byStatus['503'] ?? 0) / r.stats.requests));
    const ok = ratio <= 1.3 && share <= 0.05;
    failed ||= !ok;
    console.log(
      `  median ${ratio.toFixed(2)}× ideal (goal ≤ 1.30), at most ${(share * 100).toFixed(1)}% answered 503 (goal ≤ 5%): ${ok ? 'met' : 'NOT met'}` +
        ` · pinned ${most}: ${(median(reference) / ideal).toFixed(2)}× ideal`,
    );
    console.log(plot(runs.at(-1).stats.trace));
  }
}

console.log(`\n${load()} at the end`);
process.exitCode = failed ? 1 : 0;
