#!/usr/bin/env node
// The baseline of the core benchmark: the least a bulk client can do — read the
// lines, send 1000-address batches over an undici keep-alive pool at the same
// concurrency, and write the same CSV rows in input order. No dedupe, no
// precheck, no retries. Usage: minimal-client.mjs URL KEY INPUT OUTPUT CONCURRENCY
import { createReadStream, createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';

const [url, key, input, output, concurrencyArg] = process.argv.slice(2);
const concurrency = Number(concurrencyArg ?? 4);
const pool = new Pool(url, { connections: concurrency });
const out = createWriteStream(output);
const cell = (v) => (v === undefined ? '' : String(v));
const csv = (s) => (/[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);
out.write('email,status,is_valid,confidence,provider,syntax,domain,mx,disposable,role,free,suggestion,error\n');

async function send(emails) {
  const res = await pool.request({
    path: '/api/validate/bulk',
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ emails }),
  });
  const body = await res.body.json();
  const byEmail = new Map(body.results.map((r) => [r.email, r]));
  return emails.map((e) => {
    const r = byEmail.get(e);
    const d = r.details;
    return [e, r.status, r.isValid, r.confidence, r.provider, d.syntax, d.domain, d.mx, d.disposable, d.role, '', '', '']
      .map((v) => csv(cell(v))).join(',') + '\n';
  }).join('');
}

const queue = [];
let batch = [];
const flushHead = async () => {
  const text = await queue.shift();
  if (!out.write(text)) await new Promise((r) => out.once('drain', r));
};
for await (const line of createInterface({ input: createReadStream(input), crlfDelay: Infinity })) {
  batch.push(line.trim());
  if (batch.length === 1000) {
    queue.push(send(batch));
    batch = [];
    if (queue.length >= concurrency) await flushHead();
  }
}
if (batch.length) queue.push(send(batch));
while (queue.length) await flushHead();
await new Promise((r) => out.end(r));
await pool.close();
