#!/usr/bin/env node
// Issue 3's benchmark: 40,000 addresses, batch 1000, concurrency 8 against a
// server allowing 5 requests per 2 s — once per X-RateLimit-Reset format — then a
// fault run (15% 503, 5% reset sockets, 5% responses missing a result).
// Prints elapsed/ideal and the 429 count per format, and for the fault run
// whether every row came out right and how many retries it spent.
// Needs `npm run build` first (npm run bench does it).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(root, 'bin', 'mailsift.js');
const SERVER = join(root, 'test', 'support', 'fault-server.mjs');
const KEY = 'bench-key';
const N = 40_000;
const BATCH = 1000;
const LIMIT = 5;
const WINDOW_MS = 2000;
const FORMATS = ['epoch-s', 'epoch-ms', 'delta-s', 'http-date', 'iso'];

const dir = mkdtempSync(join(tmpdir(), 'mailsift-ratebench-'));
const prefixes = ['', 'invalid', 'risky', 'unknown'];
const addresses = Array.from({ length: N }, (_, i) => `${prefixes[i % 4]}user${i}@domain${i % 997}.example`);
const input = join(dir, 'input.txt');
writeFileSync(input, addresses.join('\n') + '\n');
const expectedStatus = (email) => {
  const local = email.slice(0, email.lastIndexOf('@')).toLowerCase();
  return prefixes.slice(1).find((p) => local.startsWith(p)) ?? 'valid';
};

/** Starts the fault server as its own process; resolves with its URL and a stop(). */
function startServer(args) {
  const child = spawn(process.execPath, [SERVER, '--api-key', KEY, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    const timer = setTimeout(() => reject(new Error('fault server did not start')), 10_000);
    lines.once('line', (line) => {
      clearTimeout(timer);
      const { url } = JSON.parse(line);
      resolve({
        url,
        stats: async () => (await fetch(`${url}/__stats`)).json(),
        stop: () =>
          new Promise((r) => {
            child.once('exit', r);
            child.kill('SIGTERM');
          }),
      });
    });
    child.once('error', reject);
  });
}

function runMailsift(url, output, summary) {
  const args = [
    'validate',
    input,
    '-o',
    output,
    '--summary',
    summary,
    '--batch-size',
    String(BATCH),
    '--concurrency',
    '8',
    '--retries',
    '8',
    '--no-progress',
    '--quiet',
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: url },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 10 * 60_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

/** Every input row once, in order, with the status the server gives it. */
function checkRows(output) {
  const lines = readFileSync(output, 'utf8').trimEnd().split('\n').slice(1);
  if (lines.length !== N) return `${lines.length} rows for ${N} inputs`;
  let wrong = 0;
  for (let i = 0; i < N; i++) {
    const [email, status] = lines[i].split(',');
    if (email !== addresses[i] || status !== expectedStatus(email)) wrong++;
  }
  return wrong === 0 ? 'all rows correct' : `${wrong} rows wrong`;
}

const requests = Math.ceil(N / BATCH);
const ideal = (Math.ceil(requests / LIMIT) - 1) * WINDOW_MS;
console.log(`${N} addresses, batch ${BATCH}, concurrency 8, limit ${LIMIT} per ${WINDOW_MS / 1000} s: ideal ${(ideal / 1000).toFixed(1)} s`);
console.log('reset format   elapsed   elapsed/ideal   429s   requests   rows');
let failed = false;
for (const format of FORMATS) {
  const server = await startServer(['--rate-limit', `${LIMIT}/${WINDOW_MS}`, '--reset-format', format]);
  const output = join(dir, `out-${format}.csv`);
  const summaryFile = join(dir, `summary-${format}.json`);
  const run = await runMailsift(server.url, output, summaryFile);
  const stats = await server.stats();
  await server.stop();
  if (run.code !== 0) {
    console.log(`${format.padEnd(13)}  exit ${run.code}: ${run.stderr.trim().split('\n')[0]}`);
    failed = true;
    continue;
  }
  const summary = JSON.parse(readFileSync(summaryFile, 'utf8'));
  const ratio = summary.elapsedMs / ideal;
  const rows = checkRows(output);
  if (ratio > 1.1 || stats.count429 > 1 || rows !== 'all rows correct') failed = true;
  console.log(
    `${format.padEnd(13)}  ${(summary.elapsedMs / 1000).toFixed(2).padStart(6)} s   ${ratio.toFixed(3).padStart(13)}   ${String(stats.count429).padStart(4)}   ${String(stats.requests).padStart(8)}   ${rows}`,
  );
}

{
  const server = await startServer(['--fail-503', '0.15', '--reset-rate', '0.05', '--drop-result-rate', '0.05', '--seed', '42']);
  const output = join(dir, 'out-faults.csv');
  const summaryFile = join(dir, 'summary-faults.json');
  const run = await runMailsift(server.url, output, summaryFile);
  const stats = await server.stats();
  await server.stop();
  const summary = run.code === 0 || run.code === 4 ? JSON.parse(readFileSync(summaryFile, 'utf8')) : undefined;
  const rows = summary ? checkRows(output) : `exit ${run.code}: ${run.stderr.trim().split('\n')[0]}`;
  if (run.code !== 0 || rows !== 'all rows correct') failed = true;
  console.log(`\nfault run (15% 503, 5% reset sockets, 5% dropped results): exit ${run.code}, ${rows}`);
  if (summary) {
    console.log(
      `  ${summary.requests} requests for ${requests} batches, ${summary.retries} retries, ` +
        `server saw ${JSON.stringify(stats.byStatus)}, ${(summary.elapsedMs / 1000).toFixed(2)} s`,
    );
  }
}

rmSync(dir, { recursive: true, force: true });
process.exitCode = failed ? 1 : 0;
