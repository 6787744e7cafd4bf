#!/usr/bin/env node
// The SMTP mailbox check (issue 15). 10,000 addresses over 200 domains (one MX
// host each, at a loopback address of its own) against a loopback smtp-server
// that holds every reply 20 ms (bench/smtp-server.mjs, its own process).
// Compared in the same run, rounds
// alternating which goes first:
//   ours      mailsift's SmtpChecker: per domain one session, one MAIL FROM,
//             a catch-all probe, then up to 100 RCPT per transaction;
//   baseline  one connection per address, as Reacher and AfterShip do it:
//             banner, EHLO, MAIL FROM, RCPT of a random address (their
//             catch-all check), RCPT of the address, QUIT. Same client code
//             (SmtpSession), same run-wide concurrency and per-host limit.
// Prints addresses/s and connections opened, both as ratios (goal >= 5x faster,
// >= 20x fewer connections), and the most sessions open at once to one host.
// Imports the compiled engine from dist/ (`npm run bench` builds it).
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pLimit from 'p-limit';
import { SmtpChecker } from '../dist/engines/local/smtp/checker.js';
import { SmtpSession } from '../dist/engines/local/smtp/session.js';
import { MemorySessionBudget } from '../dist/engines/local/smtp/stores.js';
import { loopback, median, ratio } from './lib.mjs';

const DOMAINS = 200;
const PER_DOMAIN = 50;
const CONCURRENCY = Number(process.env.SMTP_BENCH_CONCURRENCY ?? 32);
const PER_HOST = 2;
const ROUNDS = Number(process.env.SMTP_BENCH_ROUNDS ?? 3);

const server = fork(fileURLToPath(new URL('./smtp-server.mjs', import.meta.url)), [String(DOMAINS)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
const ask = (m) =>
  new Promise((r) => {
    server.once('message', r);
    if (m) server.send(m);
  });
const { port } = await ask();

const jobs = Array.from({ length: DOMAINS }, (_, d) => ({
  domain: `d${d}.bench.test`,
  hosts: [`mx.d${d}.bench.test`],
  emails: Array.from({ length: PER_DOMAIN }, (_, i) => `user${i}@d${d}.bench.test`),
}));
const N = DOMAINS * PER_DOMAIN;
/** mx.d<N>.bench.test → its own loopback address (the check is polite per address) */
const addressOf = (host) => loopback(Number(/^mx\.d(\d+)\./.exec(host)[1]));
const resolveHost = async (host) => [addressOf(host)];

async function ours() {
  const budget = new MemorySessionBudget(PER_HOST);
  const checker = new SmtpChecker({
    helo: 'bench.test',
    from: '',
    port,
    timeoutMs: 10_000,
    concurrency: CONCURRENCY,
    perHost: PER_HOST,
    retryDelayMs: 1000,
    resolveHost,
    onWarning: (w) => console.error(w),
    budget,
  });
  // as the engine does with a batch: every domain at once, bounded by the checker's limits
  const found = await Promise.all(jobs.map((j) => checker.checkDomain(j)));
  const accepted = found.reduce((n, m) => n + [...m.values()].filter((f) => f.mailbox === 'accepted').length, 0);
  return { accepted, maxPerHost: budget.maxOpen };
}

async function baseline() {
  const budget = new MemorySessionBudget(PER_HOST);
  const limit = pLimit(CONCURRENCY);
  let accepted = 0;
  await Promise.all(
    jobs.flatMap((j) =>
      j.emails.map(async (email) => {
        const lease = await budget.acquire(addressOf(j.hosts[0]));
        try {
          await limit(async () => {
            const { session } = await SmtpSession.open({ host: addressOf(j.hosts[0]), port, timeoutMs: 10_000 });
            try {
              await session.command('EHLO bench.test');
              await session.command('MAIL FROM:<>');
              await session.command(`RCPT TO:<x${randomBytes(12).toString('hex').slice(0, 19)}@${j.domain}>`);
              if ((await session.command(`RCPT TO:<${email}>`)).code === 250) accepted++;
            } finally {
              // as their clients do (Go's net/smtp Quit): the 221, then close, without waiting for the server's close
              await session.command('QUIT').catch(() => undefined);
              session.destroy();
            }
          });
        } finally {
          lease.release();
        }
      }),
    ),
  );
  return { accepted, maxPerHost: budget.maxOpen };
}

async function measure(name, fn) {
  await ask('reset');
  const t = performance.now();
  const r = await fn();
  const ms = performance.now() - t;
  const s = await ask('stats');
  if (r.accepted !== N) throw new Error(`${name}: ${r.accepted} of ${N} accepted`);
  if (s.data !== 0) throw new Error(`${name}: DATA was sent`);
  return { ms, rate: N / (ms / 1000), connections: s.connections, serverMaxPerHost: s.maxPerDomain, clientMaxPerHost: r.maxPerHost };
}

const fmt = (n) => Math.round(n).toLocaleString('en-US');
const runs = { ours: [], baseline: [] };
try {
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? ['ours', 'baseline'] : ['baseline', 'ours'];
    for (const name of order) runs[name].push(await measure(name, name === 'ours' ? ours : baseline));
  }
  const speed = median(runs.ours.map((o, i) => o.rate / runs.baseline[i].rate));
  const o = runs.ours;
  const b = runs.baseline;
  console.log(
    `addresses                 ${fmt(N)} over ${DOMAINS} domains, replies held ${process.env.SMTP_BENCH_DELAY_MS ?? 20} ms, --smtp-concurrency ${CONCURRENCY}, --smtp-per-host ${PER_HOST}, ${ROUNDS} rounds`,
  );
  console.log(`ours                      ${o.map((r) => fmt(r.rate)).join(', ')} addresses/s; ${fmt(o[0].connections)} connections`);
  console.log(`baseline (1 per address)  ${b.map((r) => fmt(r.rate)).join(', ')} addresses/s; ${fmt(b[0].connections)} connections`);
  console.log(`speed ratio               ${speed.toFixed(2)}x (median of paired rounds; goal >= 5)`);
  console.log(`connections ratio         ${ratio(b[0].connections, o[0].connections)}x fewer (goal >= 20)`);
  console.log(
    `most sessions to one host ours ${Math.max(...o.map((r) => r.serverMaxPerHost))} (server-side), ${Math.max(...o.map((r) => r.clientMaxPerHost))} (client budget); baseline ${Math.max(...b.map((r) => r.serverMaxPerHost))}; limit ${PER_HOST}`,
  );
} finally {
  server.kill('SIGTERM');
}
