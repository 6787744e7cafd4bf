#!/usr/bin/env node
// The baseline of the core benchmark: the fastest minimal bulk client we could
// write — the whole file read at once, 1000-address batches over node:http with a
// keep-alive agent at the same concurrency, JSON.parse, plain string building,
// and the same CSV rows written in input order with synchronous writes. No
// dedupe, no precheck, no retries, no streaming (it holds the whole input).
// Usage: minimal-client.mjs URL KEY INPUT OUTPUT CONCURRENCY
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { Agent, request } from 'node:http';

const [url, key, input, output, concurrencyArg] = process.argv.slice(2);
const concurrency = Number(concurrencyArg ?? 4);
const { hostname, port } = new URL(url);
const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
const out = openSync(output, 'w');
const cell = (v) => (v === undefined ? '' : String(v));
const csv = (s) => (/[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);
writeSync(out, 'email,status,is_valid,confidence,provider,syntax,domain,mx,disposable,role,free,suggestion,smtp,catch_all,error\n');

function post(emails) {
  const body = JSON.stringify({ emails });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent, hostname, port, path: '/api/validate/bulk', method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${key}` },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function send(emails) {
  const { results } = await post(emails);
  const byEmail = new Map();
  for (const r of results) byEmail.set(r.email, r);
  let text = '';
  for (const e of emails) {
    const r = byEmail.get(e);
    const d = r.details;
    text += csv(e) + ',' + r.status + ',' + cell(r.isValid) + ',' + cell(r.confidence) + ',' + csv(r.provider) + ',' +
      cell(d.syntax) + ',' + csv(cell(d.domain)) + ',' + cell(d.mx) + ',' + cell(d.disposable) + ',' + cell(d.role) + ',,,,,\n';
  }
  return text;
}

const lines = readFileSync(input, 'utf8').split('\n');
if (lines.at(-1) === '') lines.pop();
const queue = [];
for (let i = 0; i < lines.length; i += 1000) {
  queue.push(send(lines.slice(i, i + 1000).map((l) => l.trim())));
  if (queue.length >= concurrency) writeSync(out, await queue.shift());
}
while (queue.length) writeSync(out, await queue.shift());
closeSync(out);
agent.destroy();
