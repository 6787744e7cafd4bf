#!/usr/bin/env node
// The baseline of the throughput benchmark: the fastest minimal bulk client we
// could write — the whole file read at once, 1000-address batches over a
// keep-alive pool at the same concurrency, JSON.parse of the whole body, plain
// string building, and the same CSV rows written in input order with
// synchronous writes. No dedupe, no precheck, no retries, no streaming (it
// holds the whole input). Two transports, so that the benchmark can take the
// faster as its baseline: node:http with a keep-alive Agent, or an undici Pool
// (what mailsift itself uses).
// Usage: minimal-client.mjs URL KEY INPUT OUTPUT CONCURRENCY [http|undici]
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { Pool } from 'undici';
import { minimalRows } from './minimal-rows.mjs';

const [url, key, input, output, concurrencyArg, transport = 'http'] = process.argv.slice(2);
const concurrency = Number(concurrencyArg ?? 4);
const { hostname, port } = new URL(url);
const out = openSync(output, 'w');
const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
writeSync(out, 'email,status,reason,is_valid,confidence,provider,syntax,domain,mx,disposable,role,free,suggestion,smtp,catch_all,error\n');

let post;
let close;
if (transport === 'undici') {
  const pool = new Pool(url, { connections: concurrency });
  post = async (emails) => {
    const res = await pool.request({ path: '/api/validate/bulk', method: 'POST', headers, body: JSON.stringify({ emails }) });
    return res.body.json();
  };
  close = () => pool.close();
} else {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  post = (emails) => {
    const body = JSON.stringify({ emails });
    return new Promise((resolve, reject) => {
      const req = request(
        { agent, hostname, port, path: '/api/validate/bulk', method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(body) } },
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
  };
  close = () => agent.destroy();
}

async function send(emails) {
  const { results } = await post(emails);
  return minimalRows(emails, results);
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
await close();
