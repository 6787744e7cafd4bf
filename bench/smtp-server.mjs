#!/usr/bin/env node
// The SMTP benchmark's mail server, in its own process (forked, IPC): the
// smtp-server package on 127.0.0.1 behind a TCP front that holds every reply
// 20 ms (a mail server across the internet, doing its checks), and counts
// connections: in all, and open at once per recipient domain (one MX host per
// domain in the bench). The front listens on as many loopback addresses as the
// first argument says (lib.mjs loopback(): one server address per MX host).
// Every address is accepted but random catch-all probes (`x` + 19 letters or
// digits), which get 550 5.1.1. DATA is refused.
import { connect } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { listenOnEach, loopback } from './lib.mjs';

const DELAY_MS = Number(process.env.SMTP_BENCH_DELAY_MS ?? 20);

const smtp = new SMTPServer({
  disabledCommands: ['AUTH', 'STARTTLS'],
  authOptional: true,
  disableReverseLookup: true,
  hideENHANCEDSTATUSCODES: true,
  logger: false,
  maxClients: 100_000,
  onRcptTo(address, _session, cb) {
    const local = address.address.slice(0, address.address.lastIndexOf('@'));
    if (/^x[a-z0-9]{19}$/.test(local)) {
      const err = new Error('5.1.1 User unknown');
      err.responseCode = 550;
      return cb(err);
    }
    cb();
  },
  onData(stream, _s, cb) {
    data++;
    stream.resume();
    stream.on('end', () => cb(new Error('no')));
  },
});
let data = 0;
await new Promise((r) => smtp.listen(0, '127.0.0.1', r));
const upstreamPort = smtp.server.address().port;

let connections = 0;
const openByDomain = new Map();
let maxPerDomain = 0;
const front = (client) => {
  connections++;
  client.setNoDelay(true);
  const up = connect({ host: '127.0.0.1', port: upstreamPort });
  up.setNoDelay(true);
  let domain;
  let seen = '';
  client.on('data', (chunk) => {
    if (domain === undefined) {
      seen += chunk.toString('latin1');
      const m = /RCPT TO:<[^>]*@([^>]+)>/i.exec(seen);
      if (m) {
        domain = m[1].toLowerCase();
        const n = (openByDomain.get(domain) ?? 0) + 1;
        openByDomain.set(domain, n);
        maxPerDomain = Math.max(maxPerDomain, n);
        seen = '';
      } else if (seen.length > 4096) seen = seen.slice(-1024);
    }
    up.write(chunk);
  });
  up.on('data', (chunk) => setTimeout(() => client.writable && client.write(chunk), DELAY_MS));
  const done = () => {
    if (domain !== undefined) {
      openByDomain.set(domain, openByDomain.get(domain) - 1);
      domain = null;
    }
    client.destroy();
    up.destroy();
  };
  client.on('close', done).on('error', done);
  up.on('close', () => setTimeout(done, DELAY_MS + 5)).on('error', done);
};
const hosts = Array.from({ length: Number(process.argv[2] ?? 1) }, (_, i) => loopback(i));
const { port } = await listenOnEach(hosts, front);

process.on('message', (m) => {
  if (m === 'stats') process.send({ connections, maxPerDomain, data });
  if (m === 'reset') {
    connections = 0;
    maxPerDomain = 0;
    process.send({ ok: true });
  }
});
process.send({ port });
