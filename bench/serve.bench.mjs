#!/usr/bin/env node
// `mailsift validate` against `mailsift serve --no-dns` (issue 6), compared with
// the same client against a minimal loopback server that does no validating:
// the ratio says what serve (HTTP handling + engine) costs on top of the client.
// Uses the compiled dist/ (run `npx tsc -p .` first; `npm run bench` does).
// BENCH_SERVE_N overrides the address count (default 1,000,000).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
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
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${label}: no listening line within 15 s: ${seen}`));
    }, 15_000);
    const onData = (c) => {
      // serve logs a line per request; keep only the start
      if (url || seen.length > 4096) return;
      seen += c;
      const m = /(https?:\/\/127\.0\.0\.1:\d+)/.exec(seen);
      if (m) {
        url = m[1];
        clearTimeout(timer);
        resolve({ url, stop: () => new Promise((r) => (child.once('exit', r), child.kill('SIGTERM'))) });
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

const dir = await mkdtemp(join(tmpdir(), 'mailsift-bench-serve-'));
try {
  const input = join(dir, 'addresses.txt');
  const keys = join(dir, 'keys.txt');
  await writeInput(input);
  await writeFile(keys, `${KEY}\n`);

  const minimalFile = join(here, 'minimal-server.mjs');
  const minimalArgs = existsSync(minimalFile) ? [minimalFile] : ['--input-type=module', '-e', FALLBACK_MINIMAL];
  const minimal = await startProcess(minimalArgs, 'minimal server');
  let minimalMs;
  try {
    minimalMs = await runValidate(input, minimal.url);
  } finally {
    await minimal.stop();
  }

  const serve = await startProcess(
    [BIN, 'serve', '--no-dns', '--port', '0', '--keys-file', keys, '--rate-limit', `${N}/60`],
    'mailsift serve',
  );
  let serveMs;
  try {
    serveMs = await runValidate(input, serve.url);
  } finally {
    await serve.stop();
  }

  const serveRate = (N / serveMs) * 1000;
  const minimalRate = (N / minimalMs) * 1000;
  console.log(`addresses: ${fmt(N)} (distinct, batches of 1000, client concurrency 4)`);
  console.log(`minimal loopback server${existsSync(minimalFile) ? '' : ' (inline fallback)'}: ${fmt(minimalRate)} addresses/s (${(minimalMs / 1000).toFixed(1)} s)`);
  console.log(`mailsift serve --no-dns: ${fmt(serveRate)} addresses/s (${(serveMs / 1000).toFixed(1)} s)`);
  console.log(`ratio serve / minimal: ${(serveRate / minimalRate).toFixed(2)}`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
