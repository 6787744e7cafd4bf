// How long mailsift takes to start (issue 32): `mailsift --version` and
// `mailsift check a@b.example --no-dns` against `node -e 0`, whole processes,
// paired and alternating (node, mailsift, node, mailsift, ...), so a drift in
// the machine's speed hits both alike. Prints the median of the per-pair
// differences (wall) and ratios (CPU, user + system from /usr/bin/time, which
// holds still better than wall on a shared machine).
//
// BENCH_ROUNDS pairs per command (default 21, after 3 warm-up runs of each).
// Goals: --version within 50 ms of node -e 0, check within 100 ms.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { BIN } from './lib.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 21);
const TIME = '/usr/bin/time';
const haveTime = existsSync(TIME);
const env = { PATH: process.env.PATH, NO_COLOR: '1' };

const cases = [
  { name: 'mailsift --version', args: [BIN, '--version'], goalMs: 50 },
  { name: 'mailsift check a@b.example --no-dns', args: [BIN, 'check', 'a@b.example', '--no-dns'], goalMs: 100 },
];
const baseline = ['-e', '0'];

console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}; ${ROUNDS} pairs each${haveTime ? '' : ' (no /usr/bin/time: wall only)'}`,
);
console.log('| command | median wall | node -e 0 | difference (median per pair) | CPU ratio (median per pair) | goal |');
console.log('|---|---|---|---|---|---|');
for (const c of cases) {
  for (let i = 0; i < 3; i++) {
    run(baseline);
    run(c.args);
  }
  const pairs = [];
  for (let i = 0; i < ROUNDS; i++) {
    const b = run(baseline);
    const a = run(c.args);
    pairs.push({ a, b });
  }
  const wallA = median(pairs.map((p) => p.a.wallMs));
  const wallB = median(pairs.map((p) => p.b.wallMs));
  const diff = median(pairs.map((p) => p.a.wallMs - p.b.wallMs));
  const cpu = haveTime ? median(pairs.map((p) => p.a.cpuMs / Math.max(p.b.cpuMs, 1))).toFixed(2) : '-';
  console.log(
    `| ${c.name} | ${wallA.toFixed(0)} ms | ${wallB.toFixed(0)} ms | ${diff.toFixed(0)} ms | ${cpu} | ≤ ${c.goalMs} ms ${diff <= c.goalMs ? 'met' : 'NOT met'} |`,
  );
}
console.log(
  `load average at the end ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);

function run(args) {
  const started = process.hrtime.bigint();
  const r = haveTime
    ? spawnSync(TIME, ['-f', '%U %S', process.execPath, ...args], { env, encoding: 'utf8' })
    : spawnSync(process.execPath, args, { env, encoding: 'utf8' });
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  let cpuMs = 0;
  if (haveTime) {
    const [user, sys] = r.stderr.trim().split('\n').pop().split(' ').map(Number);
    cpuMs = (user + sys) * 1000;
  }
  return { wallMs, cpuMs };
}

function median(xs) {
  const v = [...xs].sort((a, b) => a - b);
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
}
