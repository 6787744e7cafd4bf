#!/usr/bin/env node
// The benchmarks' loopback API: answers every bulk request in Shape A, "valid",
// as cheaply as node:http allows, so that what is measured is the client.
// Run as its own process; prints {"url": ...} on stdout once listening.
import { createServer } from 'node:http';

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let emails = [];
    try {
      emails = JSON.parse(Buffer.concat(chunks).toString('utf8')).emails ?? [];
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end('{"success":false,"error":{"code":"INVALID_REQUEST","message":"bad JSON","details":""}}');
      return;
    }
    const results = emails.map((email) => ({
      email,
      isValid: true,
      status: 'valid',
      confidence: 0.95,
      provider: 'bench',
      details: { syntax: true, domain: email.slice(email.lastIndexOf('@') + 1).toLowerCase(), mx: true, disposable: false, role: false },
    }));
    const body = JSON.stringify({ success: true, results, summary: { total: results.length, valid: results.length, invalid: 0, risky: 0 } });
    res.writeHead(200, {
      'content-type': 'application/json',
      'x-ratelimit-limit': '1000000',
      'x-ratelimit-remaining': '999999',
      'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 60),
    });
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${server.address().port}` }) + '\n');
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
process.on('SIGINT', () => server.close(() => process.exit(0)));
