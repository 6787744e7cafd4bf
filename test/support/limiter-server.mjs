// The email-validation API behind the de facto Node rate limiters, as they are
// configured in the wild: express-rate-limit 8 (legacy X-RateLimit-*, IETF
// draft-6, draft-7 and draft-8 headers, several limiters stacked) and
// @fastify/rate-limit 11 (X-RateLimit-* with a reset in seconds, or its draft
// headers). The libraries themselves write the headers and refuse with 429: a
// test of pacing against them is a test against what users' APIs send.
// Plain ESM JavaScript so that a benchmark can run it as its own process
// (`node test/support/limiter-server.mjs --library express --limit 5/1000:draft-8`).
// Types: limiter-server.d.mts.
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';
import fastifyRateLimit from '@fastify/rate-limit';
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import Fastify from 'fastify';
import { defaultVerdict } from './fault-server.mjs';

/** A Shape A bulk answer (spec §4.2), the fault server's verdicts. */
function bulkAnswer(emails) {
  const results = emails.map((email) => {
    const v = defaultVerdict(email);
    const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
    return {
      email,
      isValid: v.status === 'valid',
      status: v.status,
      confidence: v.confidence,
      provider: 'limiter-server',
      details: { syntax: true, domain, mx: v.mx ?? v.status !== 'invalid', disposable: false, role: v.role ?? false },
    };
  });
  const count = (s) => results.filter((r) => r.status === s).length;
  return { success: true, results, summary: { total: results.length, valid: count('valid'), invalid: count('invalid'), risky: count('risky') } };
}

const delay = (ms) => (ms > 0 ? new Promise((r) => setTimeout(r, ms)) : undefined);

/** One limit per API key, as an API limits its customers (the default, by IP, is the same on loopback). */
const byKey = (req) => req.headers.authorization ?? 'anonymous';

/** @param {import('./limiter-server.d.mts').LimiterServerOptions} options */
export async function startLimiterServer(options) {
  const o = { latencyMs: 0, ...options };
  const requests = [];
  const stats = () => {
    const byStatus = {};
    for (const r of requests) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
    return { requests: requests.length, count429: byStatus[429] ?? 0, byStatus, arrivals: requests.map((r) => r.at) };
  };
  const answer = async (emails) => {
    // the limiters counted the request when it arrived; the API's own time comes after
    await delay(o.latencyMs);
    return bulkAnswer(Array.isArray(emails) ? emails.map(String) : []);
  };
  const started = o.library === 'fastify' ? await startFastify(o, requests, stats, answer) : await startExpress(o, requests, stats, answer);
  return { ...started, requests, stats, count429: () => stats().count429 };
}

async function startExpress(o, requests, stats, answer) {
  const app = express();
  app.get('/__stats', (_req, res) => res.json(stats()));
  app.use((_req, res, next) => {
    const record = { at: Date.now(), status: 0 };
    requests.push(record);
    res.on('finish', () => (record.status = res.statusCode));
    if (o.dateOffsetMs !== undefined) {
      // a Date header off the limiter's clock (a proxy's, or a clock set wrong), on every answer, 429s included
      const writeHead = res.writeHead;
      res.writeHead = function (...args) {
        this.setHeader('Date', new Date(Date.now() + o.dateOffsetMs).toUTCString());
        return writeHead.apply(this, args);
      };
    }
    next();
  });
  for (const l of o.limiters) {
    const styles = Array.isArray(l.headers) ? l.headers : [l.headers];
    const draft = styles.find((s) => s.startsWith('draft-'));
    app.use(
      rateLimit({ windowMs: l.windowMs, limit: l.limit, legacyHeaders: styles.includes('legacy'), standardHeaders: draft ?? false, keyGenerator: byKey }),
    );
  }
  app.post(['/api/validate/bulk', '/api/validate'], express.json({ limit: '5mb' }), async (req, res) => {
    const emails = req.body?.emails ?? (req.body?.email === undefined ? [] : [req.body.email]);
    res.json(await answer(emails));
  });
  const server = createServer(app);
  server.keepAliveTimeout = 30_000;
  const sockets = new Set();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

async function startFastify(o, requests, stats, answer) {
  const app = Fastify({ forceCloseConnections: true, bodyLimit: 5_000_000, keepAliveTimeout: 30_000 });
  app.addHook('onRequest', async (req) => {
    req.record = { at: Date.now(), status: 0 };
    if (req.url !== '/__stats') requests.push(req.record);
  });
  app.addHook('onResponse', async (req, reply) => {
    req.record.status = reply.statusCode;
  });
  const [l] = o.limiters;
  await app.register(fastifyRateLimit, {
    max: l.limit,
    timeWindow: l.windowMs,
    enableDraftSpec: l.headers === 'draft',
    keyGenerator: byKey,
    allowList: (req) => req.url === '/__stats',
  });
  app.get('/__stats', async () => stats());
  app.post('/api/validate/bulk', async (req) => answer(req.body?.emails));
  app.post('/api/validate', async (req) => answer(req.body?.email === undefined ? [] : [req.body.email]));
  await app.listen({ port: o.port ?? 0, host: '127.0.0.1' });
  return { url: `http://127.0.0.1:${app.server.address().port}`, close: () => app.close() };
}

/** `--library express --limit 100000/86400000:draft-8 --limit 5/1000:draft-8 --latency-ms 300`: prints {"url"} on stdout. */
function parseArgs(argv) {
  const o = { library: 'express', limiters: [] };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    switch (flag) {
      case '--library':
        o.library = value;
        break;
      case '--latency-ms':
        o.latencyMs = Number(value);
        break;
      case '--date-offset-ms':
        o.dateOffsetMs = Number(value);
        break;
      case '--clock-offset-ms':
        o.clockOffsetMs = Number(value);
        break;
      case '--port':
        o.port = Number(value);
        break;
      case '--limit': {
        // LIMIT/WINDOW_MS:STYLE[+STYLE]
        const [plan, styles = 'legacy'] = value.split(':');
        const [limit, windowMs] = plan.split('/').map(Number);
        const list = styles.split('+');
        o.limiters.push({ limit, windowMs, headers: list.length === 1 ? list[0] : list });
        break;
      }
      default:
        throw new Error(`limiter-server: unknown flag ${flag}`);
    }
  }
  return o;
}

/**
 * The whole server's clock off ours (its own process only): the limiters' stores
 * read it, and so does the Date header, which Node would otherwise write from
 * the true clock.
 */
function shiftClock(offsetMs) {
  const RealDate = globalThis.Date;
  globalThis.Date = class extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(RealDate.now() + offsetMs);
      else super(...args);
    }
    static now() {
      return RealDate.now() + offsetMs;
    }
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const options = parseArgs(process.argv.slice(2));
  if (options.clockOffsetMs) {
    shiftClock(options.clockOffsetMs);
    options.dateOffsetMs ??= 0;
  }
  const server = await startLimiterServer(options);
  process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
  const stop = () => {
    server.close().then(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
