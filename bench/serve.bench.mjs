#!/usr/bin/env node
// `npm run bench serve`: two parts.
//
// 1. (issue 16) Bulk requests of 100 addresses, `serve --no-dns`, driven by
//    autocannon: one instance counting its rate-limit windows in memory, one
//    counting them in Redis (a real redis-server started here), measured in
//    alternating rounds in the same run. Prints requests/s and p99 latency as
//    Redis / memory ratios (goal: requests/s ratio >= 0.8), and each instance's
//    peak RSS after 30 s of load against after 5 s (goal: no growth).
//    BENCH_SERVE_ROUND_S (default 5) and BENCH_SERVE_ROUNDS (default 6) set the
//    rounds; BENCH_SERVE_CONNECTIONS (default 10) the load.
//
// 2. (issue 6) `mailsift validate` against `mailsift serve --no-dns`, compared with
//    the same client against a minimal loopback server that does no validating:
//    the ratio says what serve (HTTP handling + engine) costs on top of the client.
//    BENCH_SERVE_N overrides the address count (default 1,000,000; 0 skips part 2).
//
// Uses the compiled dist/ (run `npx tsc -p .` first; `npm run bench` does).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import autocannon from 'autocannon';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const BIN = join(here, '../bin/mailsift.js');
const N = Number(process.env.BENCH_SERVE_N ?? 1_000_000);
const KEY = 'msk_bench_key';
const fmt = (n) => Math.round(n).toLocaleString('en-US');

// Used only while the core benchmark's bench/minimal-server.mjs is absent: answers
// every address "valid" in Shape A with the rate-limit headers, validates nothing.
const FALLBACK_MINIMAL = `
import { createServer } from 'node:http';
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c)).on('end', () => {
    let emails = [];
    try { emails = JSON.parse(Buffer.concat(chunks).toString()).emails ?? []; } catch {}
    const results = emails.map((email) => ({ email, isValid: true, status: 'valid', confidence: 0.9, provider: 'minimal',
      details: { syntax: true, domain: email.slice(email.lastIndexOf('@') + 1), mx: true, disposable: false, role: false } }));
    const body = JSON.stringify({ success: true, results, summary: { total: results.length, valid: results.length, invalid: 0, risky: 0 } });
    res.writeHead(200, { 'Content-Type': 'application/json', 'X-RateLimit-Limit': '1000000', 'X-RateLimit-Remaining': '999999',
      'X-RateLimit-Reset': String(Math.ceil(Date.now() / 1000) + 60) });
    res.end(body);
  });
});
server.listen(0, '127.0.0.1', () => process.stderr.write('listening on http://127.0.0.1:' + server.address().port + '\\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

/**
 * Spawns a server process and resolves with its URL, the first one it prints on
 * stdout (minimal-server.mjs: {"url": ...}) or stderr (serve: "listening on ...").
 */
function startProcess(args, label) {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let seen = '';
  let url;
  // lines that say the Redis instance fell back to memory: its figures would then not be Redis's
  const notices = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${label}: no listening line within 15 s: ${seen}`));
    }, 15_000);
    const onData = (c) => {
      if (url && c.includes('Redis at')) notices.push(...c.split('\n').filter((l) => l.includes('Redis at')));
      // serve logs a line per request; keep only the start
      if (url || seen.length > 4096) return;
      seen += c;
      const m = /(https?:\/\/127\.0\.0\.1:\d+)/.exec(seen);
      if (m) {
        url = m[1];
        clearTimeout(timer);
        resolve({ url, pid: child.pid, notices, stop: () => new Promise((r) => (child.once('exit', r), child.kill('SIGTERM'))) });
      }
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', onData);
    child.once('exit', (code) => reject(new Error(`${label} exited ${code}: ${seen}`)));
  });
}

function runValidate(input, url) {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(process.execPath, [BIN, 'validate', input, '--format', 'ndjson', '-o', '/dev/null', '-q', '--no-progress'], {
      env: { PATH: process.env.PATH, MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: url },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (c) => (err += c));
    child.once('exit', (code) => {
      const ms = performance.now() - t;
      if (code !== 0) reject(new Error(`validate exited ${code}: ${err.slice(0, 2000)}`));
      else resolve(ms);
    });
  });
}

async function writeInput(file) {
  const out = createWriteStream(file);
  for (let i = 0; i < N; i++) {
    const line = `user.${i}@domain${i % 5000}.example.com\n`;
    if (!out.write(line)) await new Promise((r) => out.once('drain', r));
  }
  await new Promise((r) => out.end(r));
}

// ---- part 1: the rate-limit store, memory against Redis --------------------

const ROUND_S = Number(process.env.BENCH_SERVE_ROUND_S ?? 5);
const ROUNDS = Number(process.env.BENCH_SERVE_ROUNDS ?? 6);
const CONNECTIONS = Number(process.env.BENCH_SERVE_CONNECTIONS ?? 10);

function findRedisServer() {
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/bin', '/usr/sbin']) {
    const path = join(dir || '.', 'redis-server');
    if (dir && existsSync(path) && spawnSync(path, ['--version']).status === 0) return path;
  }
  return undefined;
}

async function freePort() {
  const s = createServer();
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

async function startRedis(bin, dir) {
  const port = await freePort();
  const child = spawn(bin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`redis-server did not start: ${out}`))), 10_000);
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      if (/Ready to accept connections/.test(out)) {
        clearTimeout(timer);
        resolve({ url: `redis://127.0.0.1:${port}`, pid: child.pid, stop: () => new Promise((r) => (child.once('exit', r), child.kill('SIGTERM'))) });
      }
    });
    child.once('exit', (code) => (clearTimeout(timer), reject(new Error(`redis-server exited ${code}: ${out}`))));
  });
}

/** CPU seconds (user + system) a process has used so far. */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime are fields 14 and 15 of stat, in clock ticks (100 per second on Linux)
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** kB of a process's peak (VmHWM) and current (VmRSS) resident memory. */
function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  return { peakMb: kb('VmHWM') / 1024, rssMb: kb('VmRSS') / 1024 };
}

function load(url, body) {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `${url}/api/validate/bulk`,
        method: 'POST',
        headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
        body,
        connections: CONNECTIONS,
        duration: ROUND_S,
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
  });
}

async function benchStores(dir, keys) {
  const redisBin = findRedisServer();
  if (!redisBin) {
    console.log('part 1 skipped: redis-server not found (install the redis-server package)');
    return;
  }
  const redis = await startRedis(redisBin, dir);
  const args = (extra) => [BIN, 'serve', '--no-dns', '--port', '0', '--keys-file', keys, '--rate-limit', '999999999/60', ...extra];
  const instances = [];
  try {
    instances.push({ name: 'memory', ...(await startProcess(args([]), 'serve (memory)')) });
    instances.push({ name: 'redis', ...(await startProcess(args(['--redis', redis.url]), 'serve (redis)')) });
    const body = JSON.stringify({ emails: Array.from({ length: 100 }, (_, i) => `user.${i}@domain${i % 20}.example.com`) });
    const stats = new Map(instances.map((i) => [i.name, { rps: [], p99: [], non2xx: 0, errors: 0, mem: [], cpu: 0, requests: 0 }]));
    for (let round = 0; round < ROUNDS; round++) {
      // alternate which goes first, so neither always runs on a warmer machine
      const order = round % 2 === 0 ? instances : [...instances].reverse();
      for (const inst of order) {
        const cpu0 = cpuSeconds(inst.pid) + (inst.name === 'redis' ? cpuSeconds(redis.pid) : 0);
        const r = await load(inst.url, body);
        const cpu1 = cpuSeconds(inst.pid) + (inst.name === 'redis' ? cpuSeconds(redis.pid) : 0);
        const st = stats.get(inst.name);
        st.rps.push(r.requests.average);
        st.p99.push(r.latency.p99);
        st.non2xx += r.non2xx;
        st.errors += r.errors + r.timeouts;
        st.mem.push(memory(inst.pid));
        st.cpu += cpu1 - cpu0;
        st.requests += r.requests.total;
      }
    }
    console.log(`bulk requests of 100 addresses, --no-dns, autocannon ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${ROUND_S} s each`);
    console.log('(2 cores shared with the load generator and with other work on this machine: figures are noisy)');
    for (const inst of instances) {
      const st = stats.get(inst.name);
      const first = st.mem[0];
      const last = st.mem.at(-1);
      console.log(
        `  ${inst.name.padEnd(6)}: ${fmt(median(st.rps))} requests/s (${fmt(median(st.rps) * 100)} addresses/s), p99 ${median(st.p99)} ms; ` +
          `peak RSS ${first.peakMb.toFixed(0)} MB after ${ROUND_S} s of load, ${last.peakMb.toFixed(0)} MB after ${ROUNDS * ROUND_S} s ` +
          `(ratio ${(last.peakMb / first.peakMb).toFixed(2)}); non-2xx ${st.non2xx}, errors ${st.errors}`,
      );
      // the first rounds grow V8's heap to its working size; a leak would keep growing after that
      const mid = st.mem[Math.floor(st.mem.length / 2) - 1];
      console.log(
        `          peak RSS after each round: ${st.mem.map((x) => x.peakMb.toFixed(0)).join(', ')} MB; ` +
          `second half ${(last.peakMb / mid.peakMb).toFixed(2)}x; RSS now ${last.rssMb.toFixed(0)} MB`,
      );
    }
    const m = stats.get('memory');
    const r = stats.get('redis');
    // Each round's two runs are neighbours in time, so their ratio cancels most of
    // the machine's varying load; the median of those paired ratios is the figure.
    const paired = (a, b) => a.map((x, i) => x / b[i]);
    const rpsRatios = paired(r.rps, m.rps);
    const p99Ratios = paired(r.p99, m.p99);
    const range = (xs) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`;
    console.log(`  requests/s per round: memory ${m.rps.map(fmt).join(', ')}; redis ${r.rps.map(fmt).join(', ')}`);
    console.log(`ratio redis / memory, requests/s: median of paired rounds ${median(rpsRatios).toFixed(2)} (rounds ${range(rpsRatios)}) (goal >= 0.80)`);
    // CPU per request hardly depends on what else the machine runs: on an idle
    // machine with cores to spare, throughput follows it.
    const cpuPer = (st) => (st.cpu * 1000) / st.requests;
    console.log(
      `CPU per request: memory ${cpuPer(m).toFixed(3)} ms; redis ${cpuPer(r).toFixed(3)} ms (serve + redis-server); ` +
        `ratio memory / redis ${(cpuPer(m) / cpuPer(r)).toFixed(2)} (≈ the requests/s ratio wherever CPU is the limit)`,
    );
    console.log(`ratio redis / memory, p99 latency: median of paired rounds ${median(p99Ratios).toFixed(2)} (rounds ${range(p99Ratios)})`);
    console.log(`redis-server itself: peak RSS ${memory(redis.pid).peakMb.toFixed(0)} MB`);
    const notices = instances.find((i) => i.name === 'redis').notices;
    console.log(
      notices.length
        ? `WARNING: the Redis instance fell back to memory during the run:\n  ${notices.join('\n  ')}`
        : 'the Redis instance used Redis throughout (no fallback to memory)',
    );
  } finally {
    await Promise.all(instances.map((i) => i.stop()));
    await redis.stop();
  }
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

// ---- part 2: the client against serve and against a minimal server ---------

const dir = await mkdtemp(join(tmpdir(), 'mailsift-bench-serve-'));
try {
  const input = join(dir, 'addresses.txt');
  const keys = join(dir, 'keys.txt');
  await writeFile(keys, `${KEY}\n`);
  console.log('### serve: rate-limit windows in memory and in Redis');
  await benchStores(dir, keys);
  if (N > 0) {
    console.log('\n### mailsift validate against serve, and against a minimal server');
    await writeInput(input);

    const minimalFile = join(here, 'minimal-server.mjs');
    const minimalArgs = existsSync(minimalFile) ? [minimalFile] : ['--input-type=module', '-e', FALLBACK_MINIMAL];
    const minimal = await startProcess(minimalArgs, 'minimal server');
    let minimalMs;
    try {
      minimalMs = await runValidate(input, minimal.url);
    } finally {
      await minimal.stop();
    }

    const serve = await startProcess([BIN, 'serve', '--no-dns', '--port', '0', '--keys-file', keys, '--rate-limit', `${N}/60`], 'mailsift serve');
    let serveMs;
    try {
      serveMs = await runValidate(input, serve.url);
    } finally {
      await serve.stop();
    }

    const serveRate = (N / serveMs) * 1000;
    const minimalRate = (N / minimalMs) * 1000;
    console.log(`addresses: ${fmt(N)} (distinct, batches of 1000, client concurrency 4)`);
    console.log(
      `minimal loopback server${existsSync(minimalFile) ? '' : ' (inline fallback)'}: ${fmt(minimalRate)} addresses/s (${(minimalMs / 1000).toFixed(1)} s)`,
    );
    console.log(`mailsift serve --no-dns: ${fmt(serveRate)} addresses/s (${(serveMs / 1000).toFixed(1)} s)`);
    console.log(`ratio serve / minimal: ${(serveRate / minimalRate).toFixed(2)}`);
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
