// `npm run bench pipeline-parts`: where mailsift's CPU goes without the
// network, in-process, for the rows of `npm run bench throughput` (BENCH_ROWS,
// 1M): the real reader, validateStream, normalize and CSV writer, with a fake
// validator that JSON.parses a body like the benchmark server's (building the
// body is not counted). Each part's cost is the run with it less the run
// without it; the minimal client's own row loop is measured the same way.
// CPU time (process.cpuUsage), which holds still on a shared machine.
import { closeSync, createWriteStream, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, addressFile, median } from './lib.mjs';
import { minimalRows } from './minimal-rows.mjs';

const dist = (p) => import(join(ROOT, 'dist', p));
const { openInput } = await dist('read/open-input.js');
const { validateStream } = await dist('pipeline/validate-stream.js');
const { normalizeBulk, matchResults } = await dist('engines/api/normalize.js');
const { Sink } = await dist('write/sink.js');
const { createRowWriter } = await dist('write/row-writer.js');
const { Dedupe } = await dist('dedupe/dedupe.js');

const N = Number(process.env.BENCH_ROWS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const input = await addressFile(N);
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** A body like bench/minimal-server.mjs's, its CPU time kept out of the figures. */
let excluded = 0;
function body(emails) {
  const t = cpu();
  const results = emails.map((email) => ({
    email,
    isValid: true,
    status: 'valid',
    confidence: 0.95,
    provider: 'bench',
    details: { syntax: true, domain: email.slice(email.lastIndexOf('@') + 1).toLowerCase(), mx: true, disposable: false, role: false },
  }));
  const b = Buffer.from(JSON.stringify({ success: true, results, summary: { total: results.length, valid: results.length, invalid: 0, risky: 0 } }));
  excluded += cpu() - t;
  return b;
}
const answered = () => new Promise((r) => setImmediate(r));

/** Every row gets a new ticket: no dedupe at all (the input has no duplicates). */
class NoDedupe extends Dedupe {
  n = 0;
  take() {
    return this.n++;
  }
  settle() {
    return [];
  }
}

async function mailsift(mode) {
  const validator = {
    engine: 'api',
    async validate(emails) {
      const b = body(emails);
      await answered();
      return matchResults(emails, normalizeBulk(JSON.parse(b.toString('utf8')))).matched;
    },
    stats: () => ({ requests: 0, retries: 0, rateLimited: 0 }),
    close: async () => {},
  };
  const inp = await openInput({ path: input });
  if (mode === 'read') {
    for await (const rows of inp.rows) void rows;
    return;
  }
  const sink = new Sink(createWriteStream('/dev/null'), '/dev/null');
  const csv = createRowWriter('csv', sink, inp.header);
  const writer = mode === 'no writer' ? { ...csv, row() {} } : csv;
  await validateStream({ input: inp, validator, writer, batchSize: 1000, concurrency: 4, dedupe: mode === 'no dedupe' ? new NoDedupe() : undefined });
  await sink.end(true);
}

/** bench/minimal-client.mjs without its requests: read and parse only, or its rows too. */
async function minimal(mode) {
  const out = openSync('/dev/null', 'w');
  async function send(emails) {
    const b = body(emails);
    await answered();
    const { results } = JSON.parse(b.toString('utf8'));
    if (mode === 'parse') return '';
    return minimalRows(emails, results);
  }
  const lines = readFileSync(input, 'utf8').split('\n');
  if (lines.at(-1) === '') lines.pop();
  const queue = [];
  for (let i = 0; i < lines.length; i += 1000) {
    queue.push(send(lines.slice(i, i + 1000).map((l) => l.trim())));
    if (queue.length >= 4) writeSync(out, await queue.shift());
  }
  while (queue.length) writeSync(out, await queue.shift());
  closeSync(out);
}

const cases = {
  'mailsift': () => mailsift('full'),
  'mailsift, no writer': () => mailsift('no writer'),
  'mailsift, no dedupe': () => mailsift('no dedupe'),
  'mailsift, reading only': () => mailsift('read'),
  'minimal client': () => minimal('rows'),
  'minimal client, parse only': () => minimal('parse'),
};
const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
for (let i = 0; i < ROUNDS; i++) {
  for (const [name, run] of Object.entries(cases)) {
    globalThis.gc?.();
    excluded = 0;
    const t = cpu();
    await run();
    times[name].push(cpu() - t - excluded);
  }
}
const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
const s = (ms) => `${(ms / 1000).toFixed(2)} s`;
console.log(`rows ${N}, CPU time, median of ${ROUNDS} (network and body building left out)`);
for (const [k, v] of Object.entries(times)) console.log(`${k.padEnd(30)} ${s(m[k])}  (${v.map((x) => (x / 1000).toFixed(2)).join(', ')})`);
console.log(`the dedupe memo                ${s(m['mailsift'] - m['mailsift, no dedupe'])}`);
console.log(`mailsift's CSV writer          ${s(m['mailsift'] - m['mailsift, no writer'])}`);
console.log(`minimal client's rows          ${s(m['minimal client'] - m['minimal client, parse only'])}  (Map, row strings, writes)`);
