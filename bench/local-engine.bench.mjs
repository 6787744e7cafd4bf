#!/usr/bin/env node
// The offline engine's speed (issue 5). Imports the compiled engine from dist/
// (run `npx tsc -p .` first; `npm run bench` does). Prints:
//  1. syntax + lists, no DNS, over 1M generated addresses: addresses/s as a ratio
//     against validator's isEmail measured in the same run, and how many of the
//     164 isemail corpus cases each gets right;
//  2. 1M addresses over 10,000 domains against a loopback DNS server: DNS
//     questions sent (goal: one per domain) and addresses/s.
import { readFileSync } from 'node:fs';
import dns2 from 'dns2';
import validator from 'validator';
import { checkOffline, createLocalValidator } from '../dist/engines/local/index.js';
import { parseAddress } from '../dist/codec/syntax.js';

const N = 1_000_000;
const fmt = (n) => Math.round(n).toLocaleString('en-US');

// Deterministic generator (no Math.random: the same input every run)
// mulberry32: good enough low bits, unlike a bare LCG modulo n
let seed = 42;
const rand = (n) => {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) % n;
};
const FIRST = ['jane', 'john', 'maria', 'wei', 'olu', 'anna', 'li', 'sam', 'info', 'support', 'no-reply', 'kim'];
const LAST = ['doe', 'smith', 'garcia', 'chen', 'okafor', 'nowak', 'park', 'lee'];
const POPULAR = ['gmail.com', 'yahoo.com', 'hotmail.com', 'outlook.com', 'icloud.com', 'gmx.de', 'mailinator.com', 'gmial.com'];

function address(domains) {
  const r = rand(100);
  const local = `${FIRST[rand(FIRST.length)]}${r < 50 ? '.' : '_'}${LAST[rand(LAST.length)]}${rand(1000)}`;
  if (r < 3) return `${local}..x@${domains[rand(domains.length)]}`; // bad syntax
  if (r < 5) return `${local}.${domains[rand(domains.length)]}`; // no @
  return `${local}@${domains[rand(domains.length)]}`;
}

function generate(domains) {
  const out = new Array(N);
  for (let i = 0; i < N; i++) out[i] = address(domains);
  return out;
}

function time(fn) {
  globalThis.gc?.();
  const t = performance.now();
  const result = fn();
  return { ms: performance.now() - t, result };
}

async function timeAsync(fn) {
  globalThis.gc?.();
  const t = performance.now();
  const result = await fn();
  return { ms: performance.now() - t, result };
}

function corpusScore() {
  const xml = readFileSync(new URL('../test/fixtures/isemail-tests.xml', import.meta.url), 'utf8');
  const decode = (s) =>
    s
      .replace(/&#x([0-9a-f]+);/gi, (_, h) => {
        const c = parseInt(h, 16);
        return String.fromCodePoint(c >= 0x2400 && c < 0x2420 ? c - 0x2400 : c);
      })
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&apos;/g, "'")
      .replace(/&amp;/g, '&');
  const accepted = new Set(['ISEMAIL_VALID_CATEGORY', 'ISEMAIL_DNSWARN', 'ISEMAIL_RFC5321']);
  let ours = 0;
  let theirs = 0;
  let total = 0;
  for (const block of xml.split('<test id="').slice(1)) {
    const address = decode(/<address\/>|<address>([\s\S]*?)<\/address>/.exec(block)?.[1] ?? '');
    const want = accepted.has(/<category>(\w+)<\/category>/.exec(block)[1]);
    total++;
    if ((parseAddress(address) !== undefined) === want) ours++;
    if (validator.isEmail(address, { allow_ip_domain: true, require_tld: false }) === want) theirs++;
  }
  return { ours, theirs, total };
}

async function offlineBench() {
  const domains = [...POPULAR];
  for (let i = 0; i < 2000; i++) domains.push(`company${i}.example.com`);
  const input = generate(domains);
  const engine = createLocalValidator({ dns: false });
  // warm-up: JIT, list loading, per-domain memo
  for (let i = 0; i < 50_000; i++) {
    validator.isEmail(input[i]);
    checkOffline(input[i]);
  }
  await engine.validate(input.slice(0, 50_000), new AbortController().signal);

  const rounds = 3;
  let best = { isEmail: Infinity, sync: Infinity, engine: Infinity };
  for (let r = 0; r < rounds; r++) {
    const a = time(() => {
      let ok = 0;
      for (let i = 0; i < N; i++) if (validator.isEmail(input[i])) ok++;
      return ok;
    });
    const b = time(() => {
      let ok = 0;
      for (let i = 0; i < N; i++) if (checkOffline(input[i]).details.syntax) ok++;
      return ok;
    });
    const c = await timeAsync(async () => {
      let ok = 0;
      const signal = new AbortController().signal;
      for (let i = 0; i < N; i += 1000) {
        for (const v of await engine.validate(input.slice(i, i + 1000), signal)) if (v.details.syntax) ok++;
      }
      return ok;
    });
    best = { isEmail: Math.min(best.isEmail, a.ms), sync: Math.min(best.sync, b.ms), engine: Math.min(best.engine, c.ms) };
    if (r === 0) console.log(`accepted: isEmail ${fmt(a.result)}, engine ${fmt(b.result)} of ${fmt(N)}`);
  }
  const rate = (ms) => (N / ms) * 1000;
  console.log(`syntax + lists, no DNS, ${fmt(N)} addresses (best of ${rounds}):`);
  console.log(`  validator.isEmail          ${fmt(rate(best.isEmail)).padStart(11)} addr/s  ratio 1.00`);
  console.log(`  checkOffline (sync)        ${fmt(rate(best.sync)).padStart(11)} addr/s  ratio ${(best.isEmail / best.sync).toFixed(2)}`);
  console.log(`  engine.validate, 1000/batch ${fmt(rate(best.engine)).padStart(10)} addr/s  ratio ${(best.isEmail / best.engine).toFixed(2)}`);
  const score = corpusScore();
  console.log(`isemail corpus: engine ${score.ours}/${score.total}, isEmail ${score.theirs}/${score.total}`);
}

async function dnsBench() {
  const DOMAINS = 10_000;
  const domains = Array.from({ length: DOMAINS }, (_, i) => `d${i}.bench.test`);
  const { Packet } = dns2;
  let questions = 0;
  const server = dns2.createUDPServer((request, send) => {
    questions++;
    const response = Packet.createResponseFromRequest(request);
    const q = request.questions[0];
    const base = { name: q.name, class: Packet.CLASS.IN, ttl: 60 };
    if (q.type === Packet.TYPE.NS && q.name === '') response.answers.push({ ...base, type: Packet.TYPE.NS, ns: 'a.root.test' });
    else if (q.type === Packet.TYPE.MX && q.name.endsWith('.bench.test')) {
      response.answers.push({ ...base, type: Packet.TYPE.MX, exchange: `mx.${q.name}`, priority: 10 });
    } else response.header.rcode = Packet.RCODE.NXDOMAIN;
    send(response);
  });
  await server.listen(0, '127.0.0.1');
  const address = `127.0.0.1:${server.address().port}`;
  seed = 7;
  const input = new Array(N);
  for (let i = 0; i < N; i++) input[i] = `${FIRST[rand(FIRST.length)]}.${LAST[rand(LAST.length)]}${rand(10000)}@${domains[rand(DOMAINS)]}`;
  const engine = createLocalValidator({ dnsServer: address, dnsTimeoutMs: 2000, dnsConcurrency: Number(process.env.DNS_CONCURRENCY ?? 32) });
  const signal = new AbortController().signal;
  const { ms, result } = await timeAsync(async () => {
    const counts = { valid: 0, other: 0 };
    // four batches in flight, as the pipeline's default --concurrency
    let next = 0;
    const worker = async () => {
      while (next < N) {
        const start = next;
        next += 1000;
        for (const v of await engine.validate(input.slice(start, start + 1000), signal)) {
          if (v.status === 'valid') counts.valid++;
          else counts.other++;
        }
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    return counts;
  });
  await engine.close();
  server.close();
  const { dnsQueries } = engine.stats();
  console.log(`${fmt(N)} addresses over ${fmt(DOMAINS)} domains, loopback DNS server:`);
  console.log(`  DNS questions received ${fmt(questions)} (engine sent ${fmt(dnsQueries)}; ${fmt(DOMAINS)} MX + 2 for the resolver probe)`);
  console.log(`  ${fmt((N / ms) * 1000)} addr/s, ${(ms / 1000).toFixed(1)} s; valid ${fmt(result.valid)}, other ${fmt(result.other)}`);
}

// BENCH_ONLY=offline or BENCH_ONLY=dns runs one half
const only = process.env.BENCH_ONLY;
if (only !== 'dns') await offlineBench();
if (only !== 'offline') await dnsBench();
