#!/usr/bin/env node
// A light loopback API for the throughput benchmark: every answer is rendered
// before the clock starts, so that the server spends next to nothing of the
// cores the client shares with it. The rendering server (minimal-server.mjs)
// takes 2.4–3.1 s of CPU for 1M addresses, as much as a client, and both clients
// then wait on it: the ratio hid the client's own cost.
//
// Usage: light-server.mjs ADDRESS_FILE [BATCH]
// The benchmark's inputs are distinct addresses sent in input order, so each
// bulk request is a block of BATCH (1000) lines; the answer for each block is
// kept as bytes, found by the request's first address. A request that is not one
// of those blocks (a split, a re-ask, another batch size) is answered by
// rendering it, as minimal-server.mjs does, and counted.
// Prints {"url": ...} once listening; on SIGTERM prints {"rendered": n} on stderr.
// GET /bench/phases answers when the first bulk request came and the last answer
// went (epoch ms) since the last such GET, and starts over: the benchmark splits a
// run's wall time so into start-up, the requests, and the end.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [file, batchArg] = process.argv.slice(2);
const BATCH = Number(batchArg ?? 1000);

const renderResult = (email) =>
  JSON.stringify({
    email,
    isValid: true,
    status: 'valid',
    confidence: 0.95,
    provider: 'bench',
    details: { syntax: true, domain: email.slice(email.lastIndexOf('@') + 1).toLowerCase(), mx: true, disposable: false, role: false },
  });
const renderBody = (emails) =>
  `{"success":true,"results":[${emails.map(renderResult).join(',')}],"summary":{"total":${emails.length},"valid":${emails.length},"invalid":0,"risky":0}}`;

/** first address of a block → { last address, answer bytes } */
const blocks = new Map();
const lines = readFileSync(file, 'utf8').split('\n');
if (lines.at(-1) === '') lines.pop();
for (let i = 0; i < lines.length; i += BATCH) {
  const emails = lines.slice(i, i + BATCH).map((l) => l.trim());
  blocks.set(emails[0], { last: JSON.stringify(emails.at(-1)), count: emails.length, body: Buffer.from(renderBody(emails)) });
}
let rendered = 0;
/** the first bulk request's arrival and the last answer's end since the last GET /bench/phases (0: none) */
let firstAt = 0;
let lastAt = 0;

const FIRST = /"emails"\s*:\s*\[\s*("(?:[^"\\]|\\.)*")/;

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/bench/phases') {
    res.end(JSON.stringify({ firstAt, lastAt }));
    firstAt = lastAt = 0;
    return;
  }
  if (firstAt === 0) firstAt = Date.now();
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const raw = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    const m = FIRST.exec(raw.toString('latin1', 0, 400));
    const block = m ? blocks.get(JSON.parse(m[1])) : undefined;
    // The block's last address must close the request's list: the cheap proof that
    // the request is that block (not a part of it).
    const tail = block ? raw.toString('utf8', Math.max(0, raw.length - block.last.length - 8)) : '';
    let body;
    if (block && /\]\s*\}\s*$/.test(tail) && tail.includes(block.last)) {
      body = block.body;
    } else {
      let emails;
      try {
        emails = JSON.parse(raw.toString('utf8')).emails ?? [];
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end('{"success":false,"error":{"code":"INVALID_REQUEST","message":"bad JSON","details":""}}');
        return;
      }
      rendered++;
      body = renderBody(emails);
    }
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'x-ratelimit-limit': '1000000',
      'x-ratelimit-remaining': '999999',
      'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 60),
    });
    res.end(body);
    lastAt = Date.now();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${server.address().port}` }) + '\n');
});
const stop = () => {
  process.stderr.write(JSON.stringify({ rendered }) + '\n');
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
