#!/usr/bin/env node
// `npm run bench smtp` (second part): `serve --smtp` under 300 concurrent
// checks to a tarpit — mail servers that accept the connection and never send
// their greeting. Two setups, measured in the same run:
//   one domain    300 addresses of one domain (one MX host)
//   300 domains   one address each of 300 domains, each with its own MX host
//                 at a loopback address of its own (politeness is per address)
// For each: every request must be answered (200, within --smtp-deadline, as
// not determined: UNDETERMINED smtp_timeout, since a tarpit never answers), the
// serve process's peak RSS over its idle baseline (and per pending check),
// the tarpit connections opened, and how long the leftover background checks
// go on dialling after the last answer (bounded by --smtp-budget).
// Goal: every request answered; peak growth <= 64 MiB (the documented bound:
// at most 1000 pending checks, a few KiB each); leftover work ends within the
// budget. BENCH_SMTP_SERVE_N (default 300) sets the requests.
// Uses the compiled dist/ through bin/mailsift.js.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import dns2 from 'dns2';
import { listenOnEach, loopback } from './lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const BIN = join(here, '../bin/mailsift.js');
const N = Number(process.env.BENCH_SMTP_SERVE_N ?? 300);
const DEADLINE_S = 2;
const BUDGET_S = 10;
const KEY = 'bench-key-0123456789abcdef';

// the tarpit: accepts, says nothing
let opened = 0;
let openNow = 0;
let lastOpenAt = 0;
const held = new Set();
const tarpit = await listenOnEach(['127.0.0.1', ...Array.from({ length: N }, (_, i) => loopback(i))], (s) => {
  opened++;
  openNow++;
  lastOpenAt = Date.now();
  held.add(s);
  s.on('error', () => {});
  s.on('close', () => {
    openNow--;
    held.delete(s);
  });
});
const smtpPort = tarpit.port;

// DNS: every *.tarpit.test has an MX of its own name's mx.: mx.one.tarpit.test is
// 127.0.0.1, mx.d<N>.tarpit.test the Nth loopback address
const { Packet, createUDPServer } = dns2;
const dns = createUDPServer((req, send) => {
  const res = Packet.createResponseFromRequest(req);
  const q = req.questions[0];
  const name = q.name.toLowerCase().replace(/\.$/, '');
  const base = { name: q.name, class: Packet.CLASS.IN, ttl: 300 };
  if (name === '') {
    if (q.type === Packet.TYPE.NS) res.answers.push({ ...base, type: Packet.TYPE.NS, ns: 'a.root-servers.test' });
  } else if (!name.endsWith('tarpit.test')) res.header.rcode = Packet.RCODE.NXDOMAIN;
  else if (q.type === Packet.TYPE.MX && !name.startsWith('mx.')) res.answers.push({ ...base, type: Packet.TYPE.MX, exchange: `mx.${name}`, priority: 10 });
  else if (q.type === Packet.TYPE.A && name.startsWith('mx.')) {
    const d = /^mx\.d(\d+)\./.exec(name);
    res.answers.push({ ...base, type: Packet.TYPE.A, address: d ? loopback(Number(d[1])) : '127.0.0.1' });
  }
  send(res);
});
await dns.listen(0, '127.0.0.1');
const dnsAddress = `127.0.0.1:${dns.address().port}`;

const dir = mkdtempSync(join(tmpdir(), 'mailsift-smtp-serve-bench-'));
writeFileSync(join(dir, 'keys'), `${KEY}\n`);

function rssKiB(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

async function startServe() {
  const child = spawn(
    process.execPath,
    [
      BIN,
      'serve',
      '--port',
      '0',
      '--keys-file',
      join(dir, 'keys'),
      '--rate-limit',
      '100000/60',
      '--dns-server',
      dnsAddress,
      '--smtp',
      '--smtp-port',
      String(smtpPort),
      '--smtp-allow-private',
      '--smtp-deadline',
      String(DEADLINE_S),
      '--smtp-budget',
      String(BUDGET_S),
      '--smtp-retry-delay',
      '5',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  const url = await new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      err += d;
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
  return { child, url };
}

const post = (url, email) =>
  fetch(`${url}/api/validate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
    body: JSON.stringify({ email }),
  }).then(async (r) => ({ status: r.status, body: await r.json() }));

async function run(name, emailOf) {
  opened = 0;
  const { child, url } = await startServe();
  try {
    // warm: one request to a domain that does not exist, then the idle baseline
    await post(url, 'warm@nxdomain.example');
    await new Promise((r) => setTimeout(r, 500));
    const baseline = rssKiB(child.pid);
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, rssKiB(child.pid))), 50);
    const t = performance.now();
    const answers = await Promise.all(Array.from({ length: N }, (_, i) => post(url, emailOf(i))));
    const answeredMs = performance.now() - t;
    const pendingRss = rssKiB(child.pid);
    // a tarpit never answers: every answer comes at the deadline, not determined (UNDETERMINED, smtp_timeout)
    const atDeadline = answers.filter((a) => a.status === 200 && a.body.status === 'unknown' && a.body.error?.details === 'smtp_timeout').length;
    const dnsErrors = answers.filter((a) => a.body.error?.details === 'dns_error').length;
    const ok = atDeadline;
    const answeredAt = Date.now();
    // leftover background checks: wait (bounded) until no tarpit connection is open and none opened for 2 s
    const until = answeredAt + (BUDGET_S + 70) * 1000;
    while (Date.now() < until && !(openNow === 0 && Date.now() - lastOpenAt > 2000)) await new Promise((r) => setTimeout(r, 200));
    clearInterval(sampler);
    const leftoverS = (Math.max(lastOpenAt, answeredAt) - answeredAt) / 1000;
    const quietS = (Date.now() - answeredAt) / 1000;
    const growth = peak - baseline;
    console.log(
      `${name.padEnd(12)} ${ok}/${N} answered 200 at the deadline (not determined: smtp_timeout), ${dnsErrors} DNS errors, in ${(answeredMs / 1000).toFixed(1)} s; RSS baseline ${(baseline / 1024).toFixed(1)} MiB, ` +
        `peak +${(growth / 1024).toFixed(1)} MiB (${(growth / N).toFixed(1)} KiB per pending check), at the last answer +${((pendingRss - baseline) / 1024).toFixed(1)} MiB; ` +
        `${opened} tarpit connections; last one opened ${leftoverS.toFixed(1)} s after the last answer, all closed ${quietS.toFixed(1)} s after it (budget ${BUDGET_S} s)`,
    );
    return { ok, growth, quietS };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    for (const s of held) s.destroy();
  }
}

try {
  const one = await run('one domain', (i) => `user${i}@one.tarpit.test`);
  const many = await run('300 domains', (i) => `user@d${i}.tarpit.test`);
  const allOk = one.ok === N && many.ok === N;
  const bound = 64 * 1024;
  console.log(
    `every request answered: ${allOk ? 'yes' : 'NO'}; peak growth within ${bound / 1024} MiB: ${one.growth <= bound && many.growth <= bound ? 'yes' : 'NO'}`,
  );
} finally {
  for (const s of tarpit.servers) s.close();
  dns.close();
  rmSync(dir, { recursive: true, force: true });
}
