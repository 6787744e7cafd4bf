import { spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, truncate, writeFile, appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jobBinding } from '../../src/stores/binding.js';
import { openJournal } from '../../src/stores/journal.js';
import { startOf } from '../../src/fs/owner.js';
import { combineKnown } from '../../src/stores/known.js';
import { openCache } from '../../src/stores/cache.js';
import { openStores } from '../../src/stores/open-stores.js';
import { DurableAppender } from '../../src/stores/appender.js';
import { errorVerdict, type Verdict } from '../../src/verdict.js';
import { VerdictEncoder } from '../../src/codec/verdict-encoding.js';
import { crc32 } from 'node:zlib';
import { clockReading } from '../support/fake-clock.js';

const api = jobBinding({ engine: 'api', baseUrl: 'http://127.0.0.1:9000/' });

function verdict(email: string, status: Verdict['status'] = 'valid'): Verdict {
  return {
    email,
    isValid: status === 'valid',
    status,
    confidence: 0.9,
    provider: 'p1',
    details: { syntax: true, domain: email.split('@')[1]!, mx: true, disposable: false, role: false },
  };
}

let dir: string;
let path: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mailsift-journal-'));
  path = join(dir, 'run.journal');
});
afterEach(() => rm(dir, { recursive: true, force: true }));

async function lines(): Promise<string[]> {
  return (await readFile(path, 'utf8')).split('\n');
}

describe('openJournal', () => {
  it('remembers recorded verdicts across opens, not the errored ones', async () => {
    const j1 = await openJournal(path, api, 'api');
    expect(j1.get('a@x.io')).toBeUndefined();
    await j1.record([verdict('a@x.io'), verdict('b@x.io', 'invalid'), errorVerdict('c@x.io', 'TIMEOUT', 'timed out')]);
    await j1.close();

    const j2 = await openJournal(path, api, 'api');
    expect(j2.loaded).toBe(2);
    expect(j2.get('a@x.io')).toEqual({ verdict: verdict('a@x.io'), source: 'journal' });
    expect(j2.get('b@X.IO')?.verdict.status).toBe('invalid');
    expect(j2.get('b@X.IO')?.verdict.email).toBe('b@X.IO');
    expect(j2.get('c@x.io')).toBeUndefined();
    await j2.close();
  });

  it('gives back each verdict exactly as recorded (key order too), in objects of its own', async () => {
    const vs: Verdict[] = [
      verdict('a@x.io'),
      verdict('b@x.io'),
      { ...verdict('c@Mixed.Case'), details: { syntax: true, domain: 'mixed.case', suggestion: 'c@mixed.cash' } },
      { email: 'd"q@x.io', isValid: undefined, status: 'unknown', confidence: undefined, provider: '', details: {} },
    ];
    const j = await openJournal(path, api, 'api');
    await j.record(vs);
    await j.close();
    const j2 = await openJournal(path, api, 'api');
    for (const v of vs) expect(JSON.stringify(j2.get(v.email)?.verdict)).toBe(JSON.stringify(v));
    const a = j2.get('a@x.io')!.verdict;
    a.details.mx = false;
    expect(j2.get('b@x.io')!.verdict.details.mx).toBe(true);
    expect(j2.get('a@x.io')!.verdict.details.mx).toBe(true);
    await j2.close();
  });

  it('writes a header with the binding and never the API key', async () => {
    const j = await openJournal(path, jobBinding({ engine: 'api', baseUrl: 'https://user:secret-key@api.example.com/v1/?key=secret-key' }), 'api');
    await j.close();
    const [header] = await lines();
    expect(JSON.parse(header!)).toMatchObject({ mailsift: 'journal', engine: 'api', baseUrl: 'https://api.example.com/v1' });
    expect(await readFile(path, 'utf8')).not.toContain('secret-key');
  });

  it.each([
    ['another engine', jobBinding({ engine: 'local' }), /--engine api.*--engine local/],
    ['another base URL', jobBinding({ engine: 'api', baseUrl: 'http://127.0.0.1:9001' }), /127\.0\.0\.1:9000.*127\.0\.0\.1:9001/],
  ])('refuses to resume %s with exit 2 and says what to do', async (_n, other, why) => {
    await (await openJournal(path, api, 'api')).close();
    const err = await openJournal(path, other, 'api').catch((e: unknown) => e);
    expect(err).toMatchObject({ exitCode: 2 });
    const msg = (err as Error).message;
    expect(msg).toMatch(why);
    expect(msg).toContain(`delete ${path}`);
    expect(msg).not.toContain('\n');
  });

  it('refuses another DNS server for the local engine but not another batch size', async () => {
    await (await openJournal(path, jobBinding({ engine: 'local', dnsServer: '127.0.0.1:5353' }), 'dns')).close();
    await expect(openJournal(path, jobBinding({ engine: 'local' }), 'dns')).rejects.toThrow(/other validation options/);
    await (await openJournal(path, jobBinding({ engine: 'local', dnsServer: '127.0.0.1:5353' }), 'dns')).close();
  });

  it.each([
    ['a CSV file', 'email,name\na@x.io,Ann\n'],
    ['a one-line text file', 'a@x.io'],
    ['a cache', '{"mailsift":"cache","version":1,"engine":"local","fingerprint":"x"}\n'],
  ])('refuses %s and leaves it untouched', async (_n, content) => {
    await writeFile(path, content);
    await expect(openJournal(path, api, 'api')).rejects.toMatchObject({ exitCode: 2, message: expect.stringContaining('journal') });
    expect(await readFile(path, 'utf8')).toBe(content);
  });

  it('ignores a torn last line and cuts it off before appending', async () => {
    const j = await openJournal(path, api, 'api');
    await j.record([verdict('a@x.io'), verdict('b@x.io')]);
    await j.close();
    const whole = (await stat(path)).size;
    await truncate(path, whole - 7); // a crash in the middle of writing b's line

    const j2 = await openJournal(path, api, 'api');
    expect(j2.repairedBytes).toBeGreaterThan(0);
    expect(j2.get('a@x.io')).toBeDefined();
    expect(j2.get('b@x.io')).toBeUndefined();
    await j2.record([verdict('b@x.io')]);
    await j2.close();

    const all = await lines();
    expect(all.at(-1)).toBe('');
    for (const l of all.slice(0, -1)) expect(() => JSON.parse(l)).not.toThrow();
    const j3 = await openJournal(path, api, 'api');
    expect([j3.loaded, j3.badLines, j3.repairedBytes]).toEqual([2, 0, 0]);
    await j3.close();
  });

  it('survives a header torn by a crash at creation, and zero-filled tails', async () => {
    await writeFile(path, '{"mailsift":"jou');
    const j = await openJournal(path, api, 'api');
    await j.record([verdict('a@x.io')]);
    await j.close();
    await appendFile(path, Buffer.alloc(40)); // what some filesystems leave after a power cut

    const j2 = await openJournal(path, api, 'api');
    expect(j2.get('a@x.io')).toBeDefined();
    await j2.close();
    expect((await lines()).length).toBe(3);
  });

  it('skips a damaged line in the middle: at worst that address is paid again', async () => {
    await (await openJournal(path, api, 'api')).close();
    const encoder = new VerdictEncoder('api');
    await appendFile(path, `${encoder.line(verdict('a@x.io'))}\nnot json\n${encoder.line(verdict('b@x.io'))}\n`);
    const j = await openJournal(path, api, 'api');
    expect([j.loaded, j.badLines, j.unused.damaged]).toEqual([2, 1, 1]);
    await j.close();
  });

  it('reads a line only as the encoder writes it: another spelling of the same JSON is damage, even under a checksum that holds', async () => {
    await (await openJournal(path, api, 'api')).close();
    const tail = '"v11100-a",0.9,"p1",1';
    const seal = (body: string): string => `${body},"${crc32(body).toString(16).padStart(8, '0')}"]`;
    // the first line pools the tail; the others would reuse it, each address read its own way
    await appendFile(
      path,
      [`["a@x.io",${tail}`, `["b\\u0041@x.io",${tail}`, `["c\td@x.io",${tail}`, `["e@x.io" ,${tail}`, `["f@x.io",${tail}`].map(seal).join('\n') + '\n',
    );
    const j = await openJournal(path, api, 'api');
    expect([j.loaded, j.badLines]).toEqual([2, 3]);
    expect(j.get('a@x.io')?.verdict).toMatchObject({ email: 'a@x.io', status: 'valid', details: { domain: 'x.io' } });
    expect(j.get('bA@x.io')).toBeUndefined();
    expect(j.get('c\td@x.io')).toBeUndefined();
    expect(j.get('e@x.io')).toBeUndefined();
    expect(j.get('f@x.io')?.verdict.email).toBe('f@x.io');
    await j.close();
  });

  it('asks again what an older mailsift recorded (no checksum, no evidence), says so until a new record answers it, and never misreads it', async () => {
    // a journal as the first format wrote it: its header version 1, its lines without checksum
    const header = JSON.stringify({ mailsift: 'journal', version: 1, engine: api.engine, baseUrl: api.baseUrl, fingerprint: api.fingerprint });
    await writeFile(path, `${header}\n["a@x.io","v11100-",0.9,"p1",1]\n["b@x.io","i10100-",0.9,"p1",1]\n`);
    const j = await openJournal(path, api, 'api');
    expect([j.loaded, j.badLines, j.unused]).toEqual([0, 0, { damaged: 0, older: 2, weaker: 0 }]);
    expect(j.get('a@x.io')).toBeUndefined();
    await j.record([verdict('a@x.io')]);
    await j.close();
    const j2 = await openJournal(path, api, 'api');
    expect([j2.loaded, j2.unused.older]).toEqual([1, 1]);
    expect(j2.get('a@x.io')?.verdict).toEqual(verdict('a@x.io'));
    await j2.close();
    expect((await lines()).slice(0, 3).join('\n')).toContain('["b@x.io","i10100-",0.9,"p1",1]'); // never rewritten
  });

  it('keeps what is final for a journal: a temporary unknown is left out, the API’s own unknown is kept', async () => {
    const j = await openJournal(path, api, 'api');
    const temporary: Verdict = { ...verdict('dns@x.io', 'unknown'), isValid: undefined, details: { syntax: true, domain: 'x.io', dnsFailure: 'unanswered' } };
    const answered: Verdict = { ...verdict('unknown@x.io', 'unknown'), isValid: undefined, details: {} };
    await j.record([
      temporary,
      answered,
      { ...verdict('out@x.io', 'risky'), details: { ...verdict('out@x.io').details, role: true, dnsFailure: 'unanswered' }, outage: 'dns' },
    ]);
    await j.close();
    const j2 = await openJournal(path, api, 'api');
    expect([j2.get('dns@x.io'), j2.get('out@x.io')]).toEqual([undefined, undefined]);
    expect(j2.get('unknown@x.io')?.verdict.status).toBe('unknown');
    await j2.close();
  });

  it('asks again a verdict made with less evidence than the run asks for, and reuses one made with more', async () => {
    const local = jobBinding({ engine: 'local' });
    const j = await openJournal(path, local, 'syntax');
    await j.record([verdict('shallow@x.io')]);
    await j.close();
    const deep = await openJournal(path, local, 'smtp');
    await deep.record([verdict('deep@x.io')]);
    expect(deep.get('shallow@x.io')).toBeUndefined();
    expect(deep.unused).toEqual({ damaged: 0, older: 0, weaker: 1 });
    await deep.close();
    const dns = await openJournal(path, local, 'dns');
    expect([dns.get('shallow@x.io'), dns.get('deep@x.io')?.source]).toEqual([undefined, 'journal']);
    await dns.close();
  });

  it('group-commits concurrent batches: every record resolves, nothing interleaves', async () => {
    const j = await openJournal(path, api, 'api');
    const batches = Array.from({ length: 20 }, (_, b) => Array.from({ length: 50 }, (_, i) => verdict(`u${b}-${i}@x.io`)));
    await Promise.all(batches.map((b) => j.record(b)));
    await j.close();
    const j2 = await openJournal(path, api, 'api');
    expect([j2.loaded, j2.badLines]).toEqual([1000, 0]);
    await j2.close();
  });

  it('refuses a device such as /dev/zero', async () => {
    await expect(openJournal('/dev/zero', api, 'api')).rejects.toMatchObject({ exitCode: 2, message: expect.stringContaining('not a regular file') });
  });

  it('reports an unwritable path as a usage error', async () => {
    await expect(openJournal(join(dir, 'missing', 'j'), api, 'api')).rejects.toMatchObject({ exitCode: 2, message: expect.stringContaining('ENOENT') });
  });
});

describe('openCache', () => {
  const day = 86_400_000;
  const t0 = Date.UTC(2025, 0, 1);
  const local = jobBinding({ engine: 'local' });

  it('reuses verdicts younger than the TTL, across opens', async () => {
    let now = t0;
    const c1 = await openCache(path, { ttlMs: 30 * day, binding: local, evidence: 'dns', clock: clockReading(() => now) });
    await c1.record([verdict('old@x.io')]);
    now = t0 + 20 * day;
    await c1.record([verdict('new@x.io'), errorVerdict('err@x.io', 'NETWORK', 'down')]);
    await c1.close();

    now = t0 + 35 * day;
    const c2 = await openCache(path, { ttlMs: 30 * day, binding: local, evidence: 'dns', clock: clockReading(() => now) });
    expect(c2.get('old@x.io')).toBeUndefined();
    expect(c2.get('new@x.io')).toEqual({ verdict: verdict('new@x.io'), source: 'cache' });
    expect(c2.get('err@x.io')).toBeUndefined();
    await c2.close();
  });

  it('a newer verdict for the same address wins', async () => {
    let now = t0;
    const c = await openCache(path, { ttlMs: day, binding: local, evidence: 'dns', clock: clockReading(() => now) });
    await c.record([verdict('a@x.io', 'valid')]);
    now += 1000;
    await c.record([verdict('a@x.io', 'invalid')]);
    await c.close();
    const c2 = await openCache(path, { ttlMs: day, binding: local, evidence: 'dns', clock: clockReading(() => now) });
    expect(c2.get('a@x.io')?.verdict.status).toBe('invalid');
    await c2.close();
  });

  it('compacts on open when the file is mostly stale, keeping fresh entries', async () => {
    let now = t0;
    const c = await openCache(path, { ttlMs: day, binding: local, evidence: 'dns', clock: clockReading(() => now) });
    await c.record(Array.from({ length: 300 }, (_, i) => verdict(`s${i}@x.io`)));
    now += 2 * day;
    await c.record([verdict('fresh@x.io')]);
    await c.close();
    const before = (await stat(path)).size;

    const c2 = await openCache(path, { ttlMs: day, binding: local, evidence: 'dns', clock: clockReading(() => now), compactMinStale: 100 });
    expect(c2.compacted).toBe(true);
    expect(c2.fresh).toBe(1);
    await c2.record([verdict('later@x.io')]);
    await c2.close();
    expect((await stat(path)).size).toBeLessThan(before / 10);
    const c3 = await openCache(path, { ttlMs: day, binding: local, evidence: 'dns', clock: clockReading(() => now), compactMinStale: 100 });
    expect([c3.compacted, c3.fresh]).toEqual([false, 2]);
    expect(c3.get('fresh@x.io')).toBeDefined();
    await c3.close();
  });

  it('what a compaction killed half-way left (its temp file) is removed by the next run that opens the cache', async () => {
    // the temp file's name carries its owner (fs/temp.ts); a run killed long ago, and a live one
    const dead = join(dir, '.run.journal.4194303-12345-0123456789ab.mailsift-tmp');
    const live = join(dir, `.run.journal.${process.ppid}-${startOf(process.ppid) ?? '0'}-0123456789ab.mailsift-tmp`);
    await writeFile(dead, 'a half-written copy of the cache');
    await writeFile(live, 'another run at work');
    const c = await openCache(path, { ttlMs: day, binding: local, evidence: 'dns' });
    await c.close();
    await expect(stat(dead)).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await stat(live)).isFile()).toBe(true);
  });

  it('a compacted cache keeps its permissions: one shared with a group stays readable by the group', async () => {
    let now = t0;
    const c = await openCache(path, { ttlMs: day, binding: local, evidence: 'dns', clock: clockReading(() => now) });
    await c.record(Array.from({ length: 300 }, (_, i) => verdict(`s${i}@x.io`)));
    await c.close();
    await chmod(path, 0o660); // the cron jobs of two users of one group share it
    now += 2 * day;
    const c2 = await openCache(path, { ttlMs: day, binding: local, evidence: 'dns', clock: clockReading(() => now), compactMinStale: 100 });
    expect(c2.compacted).toBe(true);
    await c2.close();
    expect((await stat(path)).mode & 0o777).toBe(0o660);
  });
});

describe('what a cache keeps', () => {
  const day = 86_400_000;
  const local = jobBinding({ engine: 'local' });

  it('never serves an unknown, of whatever kind, and keeps the records a run of another depth may use', async () => {
    const c = await openCache(path, { ttlMs: day, binding: local, evidence: 'dns' });
    const unknown: Verdict = { ...verdict('u@x.io', 'unknown'), isValid: undefined, details: {} };
    const greylisted: Verdict = {
      ...verdict('g@x.io', 'unknown'),
      isValid: undefined,
      details: { syntax: true, domain: 'x.io', mx: true, smtpFailure: 'greylisted' },
    };
    await c.record([unknown, greylisted, verdict('ok@x.io')]);
    await c.close();
    expect((await lines()).filter(Boolean)).toHaveLength(2); // the header and ok@x.io
    const shallow = await openCache(path, { ttlMs: day, binding: local, evidence: 'syntax' });
    await shallow.record([verdict('shallow@x.io')]);
    expect(shallow.get('ok@x.io')?.source).toBe('cache'); // DNS's verdict answers a run without DNS
    await shallow.close();
    const deep = await openCache(path, { ttlMs: day, binding: local, evidence: 'smtp', compactMinStale: 0 });
    expect([deep.get('ok@x.io'), deep.get('shallow@x.io')]).toEqual([undefined, undefined]);
    expect(deep.unused.weaker).toBe(2);
    await deep.close();
    const again = await openCache(path, { ttlMs: day, binding: local, evidence: 'syntax' });
    expect([again.get('ok@x.io')?.source, again.get('shallow@x.io')?.source]).toEqual(['cache', 'cache']);
    await again.close();
  });

  it('compacts records of the first format away, and until then asks them again', async () => {
    const header = JSON.stringify({ mailsift: 'cache', version: 1, engine: local.engine, fingerprint: local.fingerprint });
    const now = Math.floor(Date.now() / 1000);
    await writeFile(path, `${header}\n` + Array.from({ length: 3 }, (_, i) => `[${now},"old${i}@x.io","v11100-",0.9,"p1",1]\n`).join(''));
    const c = await openCache(path, { ttlMs: day, binding: local, evidence: 'dns', compactMinStale: 2 });
    expect([c.fresh, c.compacted, c.unused.older]).toEqual([0, true, 3]);
    expect(c.get('old0@x.io')).toBeUndefined();
    await c.close();
    expect(await readFile(path, 'utf8')).not.toContain('old0@x.io');
  });
});

describe('a cache shared by runs at the same time (overlapping cron jobs)', () => {
  const day = 86_400_000;
  const t0 = Date.UTC(2025, 0, 1);
  const local = jobBinding({ engine: 'local' });
  const open = (now: () => number) => openCache(path, { ttlMs: day, binding: local, evidence: 'dns', clock: clockReading(now), compactMinStale: 100 });

  it('a run that is not alone neither rewrites the file nor cuts its tail, and every line survives', async () => {
    let now = t0;
    const seed = await open(() => now);
    await seed.record(Array.from({ length: 300 }, (_, i) => verdict(`s${i}@x.io`)));
    await seed.close();
    now += 2 * day; // all 300 stale: a lone run would rewrite the file

    const first = await openCache(path, { ttlMs: day, binding: local, evidence: 'dns', clock: clockReading(() => now), compactMinStale: 1e9 });
    await first.record([verdict('first@x.io')]);
    // what another run's write under way looks like to a reader: a line without its end
    await appendFile(path, '[1735689600,"half@x.io","v1');
    const second = await open(() => now);
    expect(second.compacted).toBe(false); // a rewrite would send first's next lines to the old file
    expect(second.get('first@x.io')?.source).toBe('cache');
    await second.record([verdict('second@x.io')]);
    await first.record([verdict('first-again@x.io')]);
    await Promise.all([first.close(), second.close()]);
    expect(await readFile(path, 'utf8')).toContain('"half@x.io","v1\n'); // left in place, and closed off

    const after = await open(() => now);
    expect(['first@x.io', 'second@x.io', 'first-again@x.io'].map((e) => after.get(e)?.source)).toEqual(['cache', 'cache', 'cache']);
    expect(after.get('half@x.io')).toBeUndefined(); // the fragment is a damaged line, not a verdict
    expect(after.compacted).toBe(true); // alone again: the stale lines go now
    await after.close();
    await expect(stat(`${path}.users`)).rejects.toThrow(); // the last one out tidied up
  });

  it('a run that died without closing does not count as a user', async () => {
    const gone = spawnSync(process.execPath, ['-e', '0']).pid!; // a pid that has exited
    await mkdir(`${path}.users`);
    await writeFile(`${path}.users/${gone}-deadbeef`, '');
    let now = t0;
    const seed = await open(() => now);
    await seed.record(Array.from({ length: 300 }, (_, i) => verdict(`s${i}@x.io`)));
    await seed.close();
    now += 2 * day;
    const c = await open(() => now);
    expect(c.compacted).toBe(true);
    await c.close();
  });
});

describe('combineKnown', () => {
  it('asks the journal first, then the cache, and records into both', async () => {
    const cachePath = join(dir, 'c.cache');
    const j = await openJournal(path, api, 'api');
    await j.record([verdict('both@x.io', 'invalid')]);
    await j.close();
    const c = await openCache(cachePath, { ttlMs: 1e9, binding: api, evidence: 'api' });
    await c.record([verdict('both@x.io', 'valid'), verdict('cached@x.io')]);
    await c.close();

    const known = combineKnown(await openJournal(path, api, 'api'), await openCache(cachePath, { ttlMs: 1e9, binding: api, evidence: 'api' }))!;
    expect(known.get('both@x.io')).toMatchObject({ source: 'journal', verdict: { status: 'invalid' } });
    expect(known.get('cached@x.io')).toMatchObject({ source: 'cache' });
    await known.record([verdict('new@x.io')]);
    await known.close();
    const j2 = await openJournal(path, api, 'api');
    const c2 = await openCache(cachePath, { ttlMs: 1e9, binding: api, evidence: 'api' });
    expect([j2.get('new@x.io')?.source, c2.get('new@x.io')?.source]).toEqual(['journal', 'cache']);
    await Promise.all([j2.close(), c2.close()]);
  });

  it('is undefined with no store, the store itself with one', async () => {
    expect(combineKnown(undefined, undefined)).toBeUndefined();
    const j = await openJournal(path, api, 'api');
    expect(combineKnown(j, undefined)).toBe(j);
    await j.close();
  });
});

describe('openStores', () => {
  it.each([[{ journal: '-' }, /need a file, not -/]])('refuses %j (exit 2, before opening anything)', async (flags, why) => {
    const err = await openStores({ ...flags, cacheTtlMs: 1000 }, { engine: 'local' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ exitCode: 2, message: expect.stringMatching(why) });
  });

  it('opens nothing without flags, and both stores in journal-then-cache order with them', async () => {
    expect(await openStores({ cacheTtlMs: 1000 }, { engine: 'local' })).toEqual({});
    const s = await openStores({ journal: path, cache: { kind: 'file', path: join(dir, 'c') }, cacheTtlMs: 1000 }, { engine: 'local' });
    expect([s.journal?.path, s.cache?.path]).toEqual([path, join(dir, 'c')]);
    await s.known!.close();
  });
});

describe('DurableAppender', () => {
  it('an append resolves once its text is in the file, whatever the sync interval', async () => {
    await writeFile(path, '');
    const { open } = await import('node:fs/promises');
    const app = new DurableAppender(await open(path, 'a'), '--journal x', 60_000);
    await Promise.all([app.append('one\n'), app.append('two\n')]);
    expect(await readFile(path, 'utf8')).toBe('one\ntwo\n');
    await app.append('three\n');
    await app.close();
    expect(await readFile(path, 'utf8')).toBe('one\ntwo\nthree\n');
  });

  it('a failed write fails that append and every later one, with the file named', async () => {
    await writeFile(path, '');
    const { open } = await import('node:fs/promises');
    const fh = await open(path, 'r'); // not writable: every write fails like a full disk would
    const app = new DurableAppender(fh, '--journal x');
    await expect(app.append('one\n')).rejects.toMatchObject({ exitCode: 1, message: expect.stringContaining('cannot write --journal x') });
    await expect(app.append('two\n')).rejects.toMatchObject({ message: expect.stringContaining('cannot write --journal x') });
    await app.close(); // already reported: closing does not throw it again
  });
});

describe('journal lock', () => {
  it('refuses a journal in use by another live run, takes over a stale lock, and unlocks on close', async () => {
    await writeFile(`${path}.lock`, `${process.ppid}\n`); // a process that is certainly alive
    await expect(openJournal(path, api, 'api')).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringContaining(`is in use by another mailsift run (pid ${process.ppid})`),
    });
    await writeFile(`${path}.lock`, '4194303\n'); // beyond any pid in use here: a run killed long ago
    const j = await openJournal(path, api, 'api');
    // the owner: pid, start and PID namespace (owner.ts)
    expect((await readFile(`${path}.lock`, 'utf8')).trim()).toMatch(new RegExp(`^${process.pid}-\\d+-\\d+u?$`));
    await j.close();
    await expect(stat(`${path}.lock`)).rejects.toMatchObject({ code: 'ENOENT' });
  });
  it("removes the half-made lock files of runs killed while locking, not a live run's", async () => {
    const dead = `${path}.lock.4194303-12345-0123456789ab.new`; // beyond any pid in use here
    const live = `${path}.lock.${process.ppid}-${startOf(process.ppid) ?? '0'}-0123456789ab.new`;
    await writeFile(dead, '4194303\n');
    await writeFile(live, `${process.ppid}\n`);
    const j = await openJournal(path, api, 'api');
    await j.close();
    await expect(stat(dead)).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await stat(live)).isFile()).toBe(true);
  });
});

describe('a journal is as old as its job: one begun longer ago than --cache-ttl is begun afresh', () => {
  const day = 86_400_000;
  const T = Date.UTC(2024, 2, 1, 2, 15);
  const age = (now: number, readOnly = false) => ({ ttlMs: 30 * day, clock: clockReading(() => now), ...(readOnly ? { readOnly } : {}) });

  it('within the TTL the job resumes; past it, nothing is reused and the file holds a new job', async () => {
    const first = await openJournal(path, api, 'api', undefined, age(T));
    expect(first.restarted).toBeUndefined();
    await first.record([verdict('a@x.io'), verdict('b@x.io')]);
    await first.close();
    expect(JSON.parse((await lines())[0]!)).toMatchObject({ mailsift: 'journal', began: T / 1000 });

    const soon = await openJournal(path, api, 'api', undefined, age(T + 29 * day));
    expect(soon.restarted).toBeUndefined();
    expect(soon.loaded).toBe(2);
    await soon.record([verdict('c@x.io')]);
    await soon.close();

    // a dry run only looks: the old job is not reused, and the file is left as it was
    const before = await readFile(path, 'utf8');
    const looked = await openJournal(path, api, 'api', undefined, age(T + 31 * day, true));
    expect(looked.restarted).toEqual({ began: T });
    expect(looked.loaded).toBe(0);
    expect(looked.get('a@x.io')).toBeUndefined();
    await looked.close();
    expect(await readFile(path, 'utf8')).toBe(before);

    // the TTL counts from when the job began, not from its last verdict
    const late = await openJournal(path, api, 'api', undefined, age(T + 31 * day));
    expect(late.restarted).toEqual({ began: T });
    expect(late.loaded).toBe(0);
    expect(late.get('c@x.io')).toBeUndefined();
    await late.record([verdict('d@x.io')]);
    await late.close();
    const now = await lines();
    expect(JSON.parse(now[0]!)).toMatchObject({ mailsift: 'journal', began: (T + 31 * day) / 1000 });
    expect(now.slice(1).filter(Boolean)).toHaveLength(1);
    const again = await openJournal(path, api, 'api', undefined, age(T + 32 * day));
    expect(again.loaded).toBe(1);
    await again.close();
  });

  it('a journal written before jobs recorded when they began: as old as the file', async () => {
    const j = await openJournal(path, api, 'api');
    await j.record([verdict('a@x.io')]);
    await j.close();
    const [header, ...rest] = await lines();
    const { began: _, ...older } = JSON.parse(header!) as Record<string, unknown>;
    await writeFile(path, [JSON.stringify(older), ...rest].join('\n'));
    const born = (await stat(path)).birthtimeMs || (await stat(path)).mtimeMs;
    const fresh = await openJournal(path, api, 'api', undefined, age(born + day));
    expect(fresh.loaded).toBe(1);
    await fresh.close();
    const stale = await openJournal(path, api, 'api', undefined, age(born + 31 * day));
    expect(stale.restarted).toBeDefined();
    expect(stale.loaded).toBe(0);
    await stale.close();
  });

  it('openStores applies --cache-ttl to the journal as to the cache', async () => {
    const j = await openJournal(path, api, 'api', undefined, age(T));
    await j.record([verdict('a@x.io')]);
    await j.close();
    const stores = await openStores(
      { journal: path, cacheTtlMs: 30 * day, clock: clockReading(() => T + 31 * day) },
      { engine: 'api', baseUrl: 'http://127.0.0.1:9000/' },
    );
    expect(stores.journal?.restarted).toEqual({ began: T });
    expect(stores.known?.get('a@x.io')).toBeUndefined();
    await stores.known?.close();
  });
});
