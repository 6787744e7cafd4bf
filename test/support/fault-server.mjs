// A test double of the email-validation API (spec/email-validation-api.md) with
// knobs for every fault the client must survive. Plain ESM JavaScript so that a
// benchmark can run it as its own process (`node test/support/fault-server.mjs`);
// tests import it through fault-server.ts. Types: fault-server.d.mts.
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';

/** mulberry32: a tiny seeded PRNG, so a fault run is reproducible. */
export function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function defaultVerdict(email) {
  const at = email.lastIndexOf('@');
  const local = (at >= 0 ? email.slice(0, at) : email).toLowerCase();
  if (local.startsWith('invalid')) return { status: 'invalid', confidence: 0.9, mx: false };
  if (local.startsWith('risky')) return { status: 'risky', confidence: 0.5, role: true };
  if (local.startsWith('unknown')) return { status: 'unknown', confidence: 0 };
  return { status: 'valid', confidence: 0.95 };
}

export function formatReset(format, resetAt, now) {
  switch (format) {
    case 'epoch-s':
      return String(Math.ceil(resetAt / 1000));
    case 'epoch-ms':
      return String(resetAt);
    case 'delta-s':
      return String(Math.max(0, Math.ceil((resetAt - now) / 1000)));
    // An HTTP date has whole seconds: round up so the reset is never announced early.
    case 'http-date':
      return new Date(Math.ceil(resetAt / 1000) * 1000).toUTCString();
    case 'iso':
      return new Date(resetAt).toISOString();
    default:
      throw new Error(`unknown resetFormat ${format}`);
  }
}

function errorBody(code, message, details = '') {
  return { success: false, error: { code, message, details } };
}

/** @param {import('./fault-server.d.mts').FaultServerOptions} [options] */
export async function startFaultServer(options = {}) {
  const o = {
    apiKey: 'test-key',
    shape: 'a',
    seed: 1,
    tooLargeStatus: 400,
    authStatus: 401,
    ...options,
  };
  const random = seeded(o.seed);
  const verdictFor = o.verdictFor ?? defaultVerdict;
  const requests = [];
  const seen = new Map();
  let responses = 0;
  let handled = 0;
  // Fixed windows aligned to whole seconds, so second-resolution reset formats are exact.
  let windowStart;
  let windowCount = 0;
  let advertised = 0;
  const sockets = new Set();
  // --capacity K [--queue Q]: K requests are served at once, Q (default K) more wait their turn, the rest get 503
  let serving = 0;
  const waitingTurn = [];
  // requests in the server (waiting or served), over time: [ms since the first, count]
  let inFlight = 0;
  let peakInFlight = 0;
  let firstAt;
  const trace = [];
  const traceInFlight = (change) => {
    const now = Date.now();
    firstAt ??= now;
    inFlight += change;
    peakInFlight = Math.max(peakInFlight, inFlight);
    trace.push([now - firstAt, inFlight]);
  };

  const serverNow = () => Date.now() + (o.clockOffsetMs ?? 0);

  /** the window's state; `consume` counts a request (limited: it was over); `refused` adds Retry-After */
  function rateState(consume, refused = false) {
    const rl = o.rateLimit;
    if (!rl) return undefined;
    const now = serverNow();
    if (windowStart === undefined) windowStart = Math.floor(now / 1000) * 1000;
    if (now >= windowStart + rl.windowMs) {
      windowStart += Math.floor((now - windowStart) / rl.windowMs) * rl.windowMs;
      windowCount = 0;
    }
    const resetAt = windowStart + rl.windowMs;
    let limited = false;
    if (consume) {
      if (windowCount >= rl.limit) limited = true;
      else windowCount++;
    }
    const headers = {
      // node writes a Date of its own; a skewed server must tell its own time
      ...(o.clockOffsetMs ? { Date: new Date(now).toUTCString() } : {}),
      // advertisedLimits: a Limit that changes on every answer while the window holds `limit`
      'X-RateLimit-Limit': String(rl.advertisedLimits ? rl.advertisedLimits[advertised++ % rl.advertisedLimits.length] : rl.limit),
      'X-RateLimit-Remaining': String(Math.max(0, rl.limit - windowCount)),
      // resetOffsetMs: a Reset that lies (an hour in the past, say)
      'X-RateLimit-Reset': formatReset(rl.resetFormat, resetAt + (rl.resetOffsetMs ?? 0), now),
    };
    if (limited || refused) headers['Retry-After'] = String(Math.max(1, Math.ceil((resetAt - now) / 1000)));
    return { headers, limited };
  }

  function buildItem(email, shapeB) {
    const v = verdictFor(email);
    const echo = o.lowercaseEcho ? email.toLowerCase() : email;
    const at = email.lastIndexOf('@');
    const domain = at >= 0 ? email.slice(at + 1).toLowerCase() : '';
    const isValid = v.status === 'valid';
    const confidence = v.confidence ?? (isValid ? 0.95 : 0.1);
    if (shapeB) return { v, item: { email: echo, isValid, confidence } };
    return {
      v,
      item: {
        email: echo,
        isValid,
        status: v.status,
        confidence,
        provider: o.provider ?? 'fault-server',
        details: {
          syntax: true,
          domain,
          mx: v.mx ?? v.status !== 'invalid',
          disposable: v.disposable ?? false,
          role: v.role ?? false,
        },
      },
    };
  }

  function pickShape() {
    if (o.shape === 'alternate') return responses % 2 === 0 ? 'a' : 'b';
    return o.shape;
  }

  function bulkBody(emails, shapeB) {
    let list = emails.filter((email) => {
      const attempt = (seen.get(email) ?? 0) + 1;
      seen.set(email, attempt);
      return !(o.omit && o.omit(email, attempt));
    });
    if (o.dropResultRate && list.length > 0 && random() < o.dropResultRate) {
      list.splice(Math.floor(random() * list.length), 1);
    }
    if (o.shuffle) {
      for (let i = list.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [list[i], list[j]] = [list[j], list[i]];
      }
    }
    const built = list.map((e) => buildItem(e, shapeB));
    const count = (s) => built.filter((b) => b.v.status === s).length;
    const results = built.map((b) => b.item);
    if (shapeB) {
      return { success: true, data: { results, summary: { total: results.length, valid: count('valid'), invalid: results.length - count('valid') } } };
    }
    return { success: true, results, summary: { total: results.length, valid: count('valid'), invalid: count('invalid'), risky: count('risky') } };
  }

  function singleBody(email, shapeB) {
    const attempt = (seen.get(email) ?? 0) + 1;
    seen.set(email, attempt);
    const { v, item } = buildItem(email, false);
    if (shapeB) {
      return {
        success: true,
        data: {
          email: item.email,
          isValid: item.isValid,
          confidence: item.confidence,
          provider: 'fault-server',
          type: v.status,
          disposable: item.details.disposable,
          role: item.details.role,
        },
      };
    }
    return { success: true, ...item, responseTime: 3, rawResponse: { result_code: 1, mx_check: item.details.mx } };
  }

  async function handle(req, res, raw, startedAt) {
    const path = (req.url ?? '').split('?')[0];
    const record = { path, emails: [], status: 0, authorization: req.headers.authorization, at: Date.now(), startedAt };
    if (path === '/__stats' && req.method === 'GET') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(stats()));
      return;
    }
    requests.push(record);
    const index = handled++;
    traceInFlight(+1);
    res.once('close', () => traceInFlight(-1));

    let body;
    try {
      body = JSON.parse(raw);
    } catch {
      body = undefined;
    }
    const bulk = path === '/api/validate/bulk';
    if (bulk && body && Array.isArray(body.emails)) record.emails = body.emails.map(String);
    else if (!bulk && body && typeof body.email === 'string') record.emails = [body.email];

    const send = (status, payload, extra = {}) => {
      record.status = status;
      if (status === 200) responses++;
      res.writeHead(status, { 'Content-Type': 'application/json', ...extra, ...o.headers });
      res.end(JSON.stringify(payload));
    };

    // Fixed windows count the requests *started* in them: the count is taken on
    // arrival, and a request over the limit is refused at once; the latency
    // (delayMs) and any wait for capacity come after. The headers tell the
    // window as it stands when the answer leaves.
    const authorized = !o.authStatus || (req.headers.authorization ?? '') === `Bearer ${o.apiKey}`;
    if (authorized && rateState(true)?.limited) return send(429, errorBody('RATE_LIMITED', 'Rate limit exceeded'), rateState(false, true).headers);
    if (o.capacity && !(await takeTurn())) {
      return send(503, errorBody('SERVICE_UNAVAILABLE', 'Server at capacity'), { ...rateState(false)?.headers, 'Retry-After': '1' });
    }
    try {
      const delay = typeof o.delayMs === 'function' ? o.delayMs() : o.delayMs;
      if (delay) await new Promise((r) => setTimeout(r, delay));
    } finally {
      if (o.capacity) endTurn();
    }
    const rlHeaders = rateState(false)?.headers ?? {};
    if (!authorized) return send(o.authStatus, errorBody('UNAUTHORIZED', 'Invalid or missing API key'), rlHeaders);

    const scripted = o.fault?.({ path, emails: record.emails, index });
    const action =
      scripted ??
      (o.resetRate && random() < o.resetRate
        ? 'reset'
        : o.failRate503 && random() < o.failRate503
          ? { status: 503 }
          : o.truncateRate && random() < o.truncateRate
            ? 'truncate'
            : undefined);
    if (action === 'reset') {
      record.status = 0;
      req.socket.destroy();
      return;
    }
    if (action === 'hang') {
      record.status = 0;
      return; // never answer; the client's timeout must fire
    }
    if (action && typeof action === 'object') {
      const code = action.code ?? (action.status >= 500 ? 'SERVER_ERROR' : 'REQUEST_ERROR');
      const extra = action.retryAfter !== undefined ? { ...rlHeaders, 'Retry-After': String(action.retryAfter) } : rlHeaders;
      return send(action.status, errorBody(code, `injected ${action.status}`), extra);
    }

    if (req.method !== 'POST' || (path !== '/api/validate' && path !== '/api/validate/bulk')) {
      return send(404, errorBody('NOT_FOUND', 'No such endpoint'), rlHeaders);
    }
    if (body === undefined || (bulk && !Array.isArray(body.emails)) || (!bulk && typeof body.email !== 'string')) {
      return send(400, errorBody('INVALID_REQUEST', 'Malformed request body'), rlHeaders);
    }
    if (bulk && (record.emails.length === 0 || record.emails.length > 1000 || (o.maxBatch && record.emails.length > o.maxBatch))) {
      if (record.emails.length === 0) return send(400, errorBody('INVALID_REQUEST', 'emails is empty'), rlHeaders);
      return send(o.tooLargeStatus, errorBody('TOO_MANY_EMAILS', 'Too many emails in one request'), rlHeaders);
    }
    if (o.poison && record.emails.some((e) => o.poison(e))) {
      return send(400, errorBody('INVALID_EMAIL', 'The email address is not valid', 'Email format validation failed'), rlHeaders);
    }
    const shapeB = pickShape() === 'b';
    const payload = bulk ? bulkBody(record.emails, shapeB) : singleBody(record.emails[0], shapeB);
    if (action === 'truncate' || action === 'malformed') {
      record.status = 200;
      responses++;
      const text = JSON.stringify(payload);
      res.writeHead(200, { 'Content-Type': 'application/json', ...rlHeaders, ...o.headers });
      // 'truncate' declares the full length and dies mid-body; 'malformed' is a
      // complete response whose JSON does not parse.
      if (action === 'malformed') return res.end(text.slice(0, Math.floor(text.length / 2)));
      res.write(text.slice(0, Math.floor(text.length / 2)));
      setImmediate(() => req.socket.destroy());
      return;
    }
    send(200, payload, rlHeaders);
  }

  /** A turn to be served: at once below capacity, after a wait while `queue` (default: capacity) wait, else false (503). */
  function takeTurn() {
    if (serving < o.capacity) {
      serving++;
      return Promise.resolve(true);
    }
    if (serving + waitingTurn.length >= o.capacity + (o.queue ?? o.capacity)) return Promise.resolve(false);
    return new Promise((resolve) => waitingTurn.push(() => resolve(true)));
  }

  function endTurn() {
    const next = waitingTurn.shift();
    if (next)
      next(); // the turn passes on: serving stays the same
    else serving--;
  }

  function stats() {
    const byStatus = {};
    for (const r of requests) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
    return { requests: requests.length, count429: byStatus[429] ?? 0, byStatus, peakInFlight, trace };
  }

  const server = createServer((req, res) => {
    const startedAt = Date.now();
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size <= 4_000_000) chunks.push(c);
    });
    req.on('end', () => {
      if (size > 4_000_000) {
        res.writeHead(413, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(errorBody('PAYLOAD_TOO_LARGE', 'Body too large')));
        return;
      }
      handle(req, res, Buffer.concat(chunks).toString('utf8'), startedAt).catch((err) => {
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(errorBody('SERVER_ERROR', String(err))));
      });
    });
  });
  server.keepAliveTimeout = 30_000;
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    count429: () => requests.filter((r) => r.status === 429).length,
    stats,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** `node fault-server.mjs --rate-limit 5/2000 --reset-format epoch-s ...`: prints {"url"} on stdout. */
function parseArgs(argv) {
  const o = {};
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    const num = () => {
      i++;
      return Number(value);
    };
    switch (flag) {
      case '--port':
        o.port = num();
        break;
      case '--api-key':
        o.apiKey = value;
        i++;
        break;
      case '--shape':
        o.shape = value;
        i++;
        break;
      case '--shuffle':
        o.shuffle = true;
        break;
      case '--seed':
        o.seed = num();
        break;
      case '--delay-ms':
        o.delayMs = num();
        break;
      case '--capacity':
        o.capacity = num();
        break;
      case '--queue':
        o.queue = num();
        break;
      case '--max-batch':
        o.maxBatch = num();
        break;
      case '--fail-503':
        o.failRate503 = num();
        break;
      case '--reset-rate':
        o.resetRate = num();
        break;
      case '--drop-result-rate':
        o.dropResultRate = num();
        break;
      case '--truncate-rate':
        o.truncateRate = num();
        break;
      case '--rate-limit': {
        const [limit, windowMs] = value.split('/').map(Number);
        o.rateLimit = { limit, windowMs, resetFormat: o.rateLimit?.resetFormat ?? 'epoch-s' };
        i++;
        break;
      }
      case '--reset-format':
        o.rateLimit = { ...(o.rateLimit ?? { limit: 60, windowMs: 60_000 }), resetFormat: value };
        i++;
        break;
      default:
        throw new Error(`fault-server: unknown flag ${flag}`);
    }
  }
  return o;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const server = await startFaultServer(parseArgs(process.argv.slice(2)));
  process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
  const stop = () =>
    void server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
