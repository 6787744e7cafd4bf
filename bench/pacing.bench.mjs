#!/usr/bin/env node
// mailsift behind the de facto Node rate limiters (test/support/limiter-server.mjs:
// express-rate-limit 8 and @fastify/rate-limit 11, the libraries writing their own
// headers): every header style, stacked policies, headers that disagree, latency.
// Each scenario: the 429s the server answered (goal: 0 in every one) and the run's
// time against the ideal where the plan binds (goal: within 1.1×). The ideal of a
// window that opens at the first request after the last one ended, R requests at
// L per window W, answers taking D: (ceil(R/L) − 1) × W + D.
//
// PACING_BINS=main:/path/to/bin/mailsift.js,branch:bin/mailsift.js runs several
// builds, scenario by scenario in turn (one sitting); PACING_ONLY=stacked,date
// picks scenarios by name. Needs `npm run build` first (npm run bench does it).
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { startLimiterServer } from '../test/support/limiter-server.mjs';
import { startFaultServer } from '../test/support/fault-server.mjs';
import { BIN, OUT, timed } from './lib.mjs';

const BINS = (process.env.PACING_BINS ?? `branch:${BIN}`).split(',').map((pair) => {
  const at = pair.indexOf(':');
  return { name: pair.slice(0, at), bin: resolve(pair.slice(at + 1)) };
});
const ONLY = process.env.PACING_ONLY?.split(',');

const express = (limiters, extra = {}) => ({ start: () => startLimiterServer({ library: 'express', limiters, ...extra }) });
const fastify = (limiter, extra = {}) => ({ start: () => startLimiterServer({ library: 'fastify', limiters: [limiter], ...extra }) });
const fault = (options) => ({ start: () => startFaultServer({ apiKey: 'bench-key', ...options }) });

/** name, server, requests, the plan that binds ({limit, windowMs}), latency, mailsift's flags */
const SCENARIOS = [];
for (const latencyMs of [0, 300]) {
  const [limit, windowMs, requests] = latencyMs === 0 ? [5, 1000, 30] : [20, 2000, 100];
  const plan = { limit, windowMs };
  const at = `${limit}/${windowMs / 1000}s, ${latencyMs} ms`;
  for (const headers of ['legacy', 'draft-6', 'draft-7', 'draft-8']) {
    SCENARIOS.push({ name: `express ${headers}, ${at}`, server: express([{ ...plan, headers }], { latencyMs }), requests, plan, latencyMs });
  }
  for (const headers of ['legacy', 'draft']) {
    SCENARIOS.push({ name: `fastify ${headers}, ${at}`, server: fastify({ ...plan, headers }, { latencyMs }), requests, plan, latencyMs });
  }
}
const stacked = [
  { limit: 100_000, windowMs: 86_400_000, headers: 'draft-8' },
  { limit: 5, windowMs: 1000, headers: 'draft-8' },
];
for (const concurrency of ['8', '32', 'auto']) {
  SCENARIOS.push({
    name: `stacked draft-8, a day's quota first, 5/1s, --concurrency ${concurrency}`,
    server: express(stacked),
    requests: 30,
    plan: { limit: 5, windowMs: 1000 },
    latencyMs: 0,
    flags: ['--concurrency', concurrency],
  });
}
SCENARIOS.push({
  name: 'stacked draft-8 with 300 ms latency, 20/2s, auto',
  server: express([{ ...stacked[0] }, { limit: 20, windowMs: 2000, headers: 'draft-8' }], { latencyMs: 300 }),
  requests: 100,
  plan: { limit: 20, windowMs: 2000 },
  latencyMs: 300,
});
SCENARIOS.push({
  name: 'X-RateLimit 1000/60s beside RateLimit 5/1s (draft-7), --concurrency 16',
  server: express([
    { limit: 1000, windowMs: 60_000, headers: 'legacy' },
    { limit: 5, windowMs: 1000, headers: 'draft-7' },
  ]),
  requests: 30,
  plan: { limit: 5, windowMs: 1000 },
  latencyMs: 0,
  flags: ['--concurrency', '16'],
});
SCENARIOS.push({
  name: 'Date an hour ahead, legacy + draft-6, 5/2s, --concurrency 16',
  server: express([{ limit: 5, windowMs: 2000, headers: ['legacy', 'draft-6'] }], { dateOffsetMs: 3_600_000 }),
  requests: 25,
  plan: { limit: 5, windowMs: 2000 },
  latencyMs: 0,
  flags: ['--concurrency', '16'],
});
SCENARIOS.push({
  name: 'a Limit that changes on every answer (fault server, 5/2s), --concurrency 16',
  server: fault({ rateLimit: { limit: 5, windowMs: 2000, resetFormat: 'epoch-ms', advertisedLimits: [5, 25, 10] } }),
  requests: 25,
  plan: { limit: 5, windowMs: 2000 },
  latencyMs: 0,
  flags: ['--concurrency', '16'],
});
SCENARIOS.push({
  name: 'a Reset an hour in the past (fault server, 5/2s), --concurrency 16',
  server: fault({ rateLimit: { limit: 5, windowMs: 2000, resetFormat: 'epoch-s', resetOffsetMs: -3_600_000 } }),
  requests: 25,
  plan: { limit: 5, windowMs: 2000 },
  latencyMs: 0,
  flags: ['--concurrency', '16'],
});

const addresses = (n) => Array.from({ length: n }, (_, i) => `user${i}@example${i % 7}.com`).join('\n') + '\n';

async function run(bin, scenario) {
  const server = await scenario.server.start();
  const input = join(OUT, `pacing-${scenario.requests}.txt`);
  await import('node:fs').then((fs) => fs.writeFileSync(input, addresses(scenario.requests)));
  const summaryFile = join(OUT, 'pacing-summary.json');
  const r = await timed(
    process.execPath,
    [bin, 'validate', input, '-o', join(OUT, 'pacing-out.csv'), '--batch-size', '1', '--no-progress', '--summary', summaryFile, ...(scenario.flags ?? [])],
    { MAILSIFT_API_KEY: 'bench-key', MAILSIFT_BASE_URL: server.url },
  );
  const stats = server.stats();
  await server.close();
  const summary = r.code === 0 || r.code === 4 ? JSON.parse(readFileSync(summaryFile, 'utf8')) : undefined;
  return { code: r.code, stats, elapsedMs: summary?.elapsedMs, stderr: r.stderr };
}

const ideal = (s) => (Math.ceil(s.requests / s.plan.limit) - 1) * s.plan.windowMs + s.latencyMs;
const load = () => `load average ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores`;
console.log(`${load()} at the start; builds: ${BINS.map((b) => `${b.name} (${b.bin})`).join(', ')}`);
console.log('scenario · build: 429s, requests, elapsed / ideal');
let failed = false;
const totals = Object.fromEntries(BINS.map((b) => [b.name, { count429: 0, worst: 0 }]));
for (const scenario of SCENARIOS) {
  if (ONLY && !ONLY.some((o) => scenario.name.includes(o))) continue;
  const parts = [];
  for (const { name, bin } of BINS) {
    const r = await run(bin, scenario);
    const ratio = r.elapsedMs === undefined ? NaN : r.elapsedMs / ideal(scenario);
    const stats = r.stats;
    const t = totals[name];
    t.count429 += stats.count429;
    t.worst = Math.max(t.worst, ratio);
    if (name === BINS.at(-1).name && (r.code !== 0 || stats.count429 > 0 || ratio > 1.1)) failed = true;
    parts.push(
      `${name}: ${r.code === 0 ? '' : `exit ${r.code} · `}${stats.count429} 429s, ${stats.requests} requests, ${(r.elapsedMs / 1000).toFixed(2)} s = ${ratio.toFixed(2)}×`,
    );
  }
  console.log(`${scenario.name} (ideal ${(ideal(scenario) / 1000).toFixed(2)} s)\n    ${parts.join(' · ')}`);
}
console.log(
  `\nin all: ${BINS.map((b) => `${b.name} ${totals[b.name].count429} 429s, at worst ${totals[b.name].worst.toFixed(2)}× ideal`).join(' · ')} (goal: 0 429s, ≤ 1.10×)`,
);
console.log(`${load()} at the end`);
process.exitCode = failed ? 1 : 0;
