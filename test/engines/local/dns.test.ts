import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalValidator, parseDnsServer, type LocalEngineOptions } from '../../../src/engines/local/index.js';
import { ANSWER_TTL_MS, UNANSWERED_TTL_MS } from '../../../src/engines/local/dns.js';
import { startDnsServer, type TestDnsServer } from '../../support/dns-server.js';
import { waitFor } from '../../support/wait.js';
import { clockReading } from '../../support/fake-clock.js';

let server: TestDnsServer;
beforeAll(async () => {
  server = await startDnsServer();
});
afterAll(() => server.close());

const signal = new AbortController().signal;

function engine(extra: LocalEngineOptions = {}) {
  const warnings: string[] = [];
  const v = createLocalValidator({ dnsServer: server.address, dnsTimeoutMs: 300, onWarning: (w) => warnings.push(w), ...extra });
  return { v, warnings };
}

describe('DNS outcomes against a loopback server', () => {
  it.each([
    ['jane@mx.test', 'valid', true, 0.9],
    ['jane@MX.test', 'valid', true, 0.9],
    ['jane@aonly.test', 'valid', true, 0.7],
    ['jane@aaaaonly.test', 'valid', true, 0.7],
    ['jane@nullmx.test', 'invalid', false, 0.99],
    ['jane@nowhere.test', 'invalid', false, 0.95],
    ['jane@nodata.test', 'invalid', false, 0.95],
    ['jane@servfail.test', 'unknown', undefined, 0.3],
    ['jane@silent.test', 'unknown', undefined, 0.3],
  ] as const)('%s → %s (mx %s)', async (email, status, mx, confidence) => {
    const { v, warnings } = engine();
    const [verdict] = await v.validate([email], signal);
    await v.close();
    expect(verdict).toMatchObject({ email, status, confidence, provider: 'mailsift-local' });
    expect(verdict!.details.mx).toBe(mx);
    expect(warnings).toEqual([]);
  });

  it('keeps list facts next to DNS facts: a role address on a real domain is risky, a dead domain invalid', async () => {
    const { v } = engine();
    const verdicts = await v.validate(['info@mx.test', 'info@nowhere.test', 'bad..dots@mx.test'], signal);
    await v.close();
    expect(verdicts.map((x) => [x.email, x.status])).toEqual([
      ['info@mx.test', 'risky'],
      ['info@nowhere.test', 'invalid'],
      ['bad..dots@mx.test', 'invalid'],
    ]);
  });

  it('asks once per domain for the engine life, sharing lookups in flight', async () => {
    const { v } = engine();
    const before = server.queries.filter((q) => q === 'MX mx.test').length;
    const batch = Array.from({ length: 1000 }, (_, i) => `user${i}@mx.test`);
    const [a, b] = await Promise.all([v.validate(batch, signal), v.validate(batch.slice(0, 10), signal)]);
    const c = await v.validate(['late@Mx.Test'], signal);
    await v.close();
    expect(a.every((x) => x.status === 'valid')).toBe(true);
    expect(b).toHaveLength(10);
    expect(c[0]!.status).toBe('valid');
    expect(server.queries.filter((q) => q === 'MX mx.test').length - before).toBe(1);
    expect(v.stats()).toMatchObject({ requests: 3, retries: 0, rateLimited: 0, warnings: [] });
    expect(v.stats().disposableListVersion).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('keeps at most dnsConcurrency domains in flight', async () => {
    const domains = Array.from({ length: 10 }, (_, i) => `held${i}.test`);
    for (const d of domains) server.zones[d] = { hold: true, mx: [{ exchange: `mx.${d}`, priority: 1 }] };
    const { v } = engine({ dnsConcurrency: 3, dnsTimeoutMs: 10_000 });
    let done = false;
    const result = v
      .validate(
        domains.map((d) => `x@${d}`),
        signal,
      )
      .finally(() => (done = true));
    // answer whatever is held, until the batch is through
    const answerHeld = (): boolean => {
      server.releaseHeld();
      return done;
    };
    await waitFor(answerHeld, { what: 'the batch to be through, its held queries answered as they come', timeoutMs: 5000 });
    const verdicts = await result;
    await v.close();
    expect(verdicts.every((x) => x.status === 'valid')).toBe(true);
    expect(server.maxHeld).toBeGreaterThan(0);
    expect(server.maxHeld).toBeLessThanOrEqual(3);
  });

  it('a resolver slowed down by a burst is waited for up to the DNS timeout, however fast it answered before', async () => {
    // c-ares (1.34, Node 20.20) times a question out after 5x the latency it measured lately (at least 250 ms),
    // whatever timeout it was given: fast answers, then a burst the server takes 1.2 s to answer
    const slow = await startDnsServer({
      fallback: (name) => (/^burst\d+\.test$/.test(name) ? { mx: [{ exchange: `mx.${name}`, priority: 10 }], delayMs: 1200 } : undefined),
    });
    const warnings: string[] = [];
    // the 40 all in flight at once (the default bound, 32, made it two rounds of 1.2 s; the bound is the test above's)
    const v = createLocalValidator({ dnsServer: slow.address, dnsTimeoutMs: 4000, dnsConcurrency: 40, onWarning: (w) => warnings.push(w) });
    try {
      const warm = await v.validate(['a@mx.test', 'b@aonly.test', 'c@nullmx.test', 'd@gmail.com'], signal);
      expect(warm.map((x) => x.status)).toEqual(['valid', 'valid', 'invalid', 'valid']);
      const burst = await v.validate(
        Array.from({ length: 40 }, (_, i) => `x@burst${i}.test`),
        signal,
      );
      expect(burst.filter((x) => x.status !== 'valid').map((x) => `${x.email}: ${x.status} ${x.details.dnsFailure ?? ''}`)).toEqual([]);
      expect(warnings).toEqual([]);
    } finally {
      await v.close();
      await slow.close();
    }
  });

  it('looks up IDN domains in their ASCII form', async () => {
    server.zones['xn--bcher-kva.test'] = { mx: [{ exchange: 'mx.xn--bcher-kva.test', priority: 10 }] };
    const { v } = engine();
    const [verdict] = await v.validate(['jürgen@bücher.test'], signal);
    await v.close();
    expect(verdict).toMatchObject({ status: 'valid', details: { domain: 'xn--bcher-kva.test', mx: true } });
    expect(server.queries).toContain('MX xn--bcher-kva.test');
  });

  it('does not look up address literals or bad syntax', async () => {
    const { v } = engine();
    const before = server.queries.length;
    const verdicts = await v.validate(['a@[192.0.2.1]', 'nope'], signal);
    await v.close();
    expect(verdicts.map((x) => x.status)).toEqual(['risky', 'invalid']);
    expect(server.queries.length).toBe(before);
  });

  it('skips DNS entirely with dns: false', async () => {
    const v = createLocalValidator({ dns: false, dnsServer: server.address });
    const [verdict] = await v.validate(['jane@nowhere.test'], signal);
    expect(verdict).toMatchObject({ status: 'valid', confidence: 0.6 });
    expect(verdict!.details.mx).toBeUndefined();
    expect(v.stats().dnsQueries).toBe(0);
  });

  it('rejects with the abort reason when aborted', async () => {
    const { v } = engine({ dnsTimeoutMs: 5000 });
    const ac = new AbortController();
    const pending = v.validate(['jane@silent.test'], ac.signal);
    ac.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
    await v.close();
  });
});

describe('DNS that does not work is not evidence', () => {
  it('a resolver that says NXDOMAIN to everything: unknown, never invalid, one warning', async () => {
    const broken = await startDnsServer({ broken: true });
    const warnings: string[] = [];
    const v = createLocalValidator({ dnsServer: broken.address, dnsTimeoutMs: 300, onWarning: (w) => warnings.push(w) });
    const first = await v.validate(['jane@mx.test', 'jane@nowhere.test', 'info@mx.test', 'x@mailinator.com'], signal);
    const second = await v.validate(['bob@other.test', 'bad..x@mx.test'], signal);
    await v.close();
    await broken.close();
    expect([...first, ...second].map((x) => [x.email, x.status, x.details.mx])).toEqual([
      ['jane@mx.test', 'unknown', undefined],
      ['jane@nowhere.test', 'unknown', undefined],
      ['info@mx.test', 'risky', undefined],
      ['x@mailinator.com', 'risky', undefined],
      ['bob@other.test', 'unknown', undefined],
      ['bad..x@mx.test', 'invalid', undefined],
    ]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/DNS is unusable/);
    expect(warnings[0]).not.toContain('\n');
    expect(v.stats().warnings).toEqual(warnings);
  });

  it('a resolver that answers MX questions but not the root-zone probe: judged by its answers, the rows and the warnings agree', async () => {
    // some resolvers refuse the root zone's NS question; real MX records prove they reach the DNS
    const picky = await startDnsServer({ zones: { '': { silent: true } } });
    const warnings: string[] = [];
    const v = createLocalValidator({ dnsServer: picky.address, dnsTimeoutMs: 300, onWarning: (w) => warnings.push(w) });
    const verdicts = await v.validate(['jane@mx.test', 'jane@nowhere.test'], signal);
    await v.close();
    await picky.close();
    expect(verdicts.map((x) => [x.status, x.details.mx, x.outage])).toEqual([
      ['valid', true, undefined],
      ['invalid', false, undefined],
    ]);
    expect(warnings).toEqual([]);
  });

  it("a resolver that answers nothing: the rows are unknown and marked as the run's own failure, and the warning says so", async () => {
    const down = await startDnsServer();
    down.down = true;
    const warnings: string[] = [];
    const v = createLocalValidator({ dnsServer: down.address, dnsTimeoutMs: 300, onWarning: (w) => warnings.push(w) });
    const verdicts = await v.validate(['jane@mx.test', 'info@mx.test'], signal);
    await v.close();
    await down.close();
    expect(verdicts.map((x) => [x.status, x.outage])).toEqual([
      ['unknown', 'dns'],
      ['risky', 'dns'],
    ]);
    expect(warnings).toEqual([expect.stringMatching(/^DNS is unusable .*: DNS-dependent statuses are unknown$/)]);
  });

  it('a resolver that answers the root zone from its cache and fails every real question: unusable by its answers, whatever the probe said', async () => {
    const cached = await startDnsServer({ fallback: () => ({ servfail: true }) });
    cached.zones = { '': { a: [] } };
    const warnings: string[] = [];
    const failures: string[] = [];
    const v = createLocalValidator({
      dnsServer: cached.address,
      dnsTimeoutMs: 300,
      onWarning: (w) => warnings.push(w),
      onDnsFailure: (code) => failures.push(code),
    });
    try {
      const verdicts = await v.validate(['a@d1.test', 'b@d2.test', 'c@d3.test', 'info@d4.test'], signal);
      expect(verdicts.map((x) => [x.status, x.outage])).toEqual([
        ['unknown', 'dns'],
        ['unknown', 'dns'],
        ['unknown', 'dns'],
        ['risky', 'dns'],
      ]);
      expect(warnings).toEqual([
        expect.stringMatching(
          /^DNS is unusable \(.* gave no answer to 4 of the last 4 domains looked up: SERVFAIL or time-outs, though it answers for the root zone\)/,
        ),
      ]);
      expect(v.dnsState()).toBe('unusable');
      expect(failures.length).toBeGreaterThanOrEqual(4);
      expect(new Set(failures)).toEqual(new Set(['ESERVFAIL']));
    } finally {
      await v.close();
      await cached.close();
    }
  });

  it('a few dead domains among answers are the list’s own: their rows are unknown, DNS stays usable', async () => {
    const warnings: string[] = [];
    const v = createLocalValidator({ dnsServer: server.address, dnsTimeoutMs: 300, onWarning: (w) => warnings.push(w) });
    try {
      server.zones['dead1.test'] = { servfail: true };
      server.zones['dead2.test'] = { servfail: true };
      const verdicts = await v.validate(['a@mx.test', 'b@dead1.test', 'c@dead2.test', 'd@aonly.test', 'e@nullmx.test'], signal);
      expect(verdicts.map((x) => [x.status, x.outage])).toEqual([
        ['valid', undefined],
        ['unknown', undefined],
        ['unknown', undefined],
        ['valid', undefined],
        ['invalid', undefined],
      ]);
      expect(warnings).toEqual([]);
      expect(v.dnsState()).toBe('ok');
    } finally {
      delete server.zones['dead1.test'];
      delete server.zones['dead2.test'];
      await v.close();
    }
  });

  it('dead domains in a row after answers, the resolver still answering about a domain that answered: the list’s own, DNS stays usable', async () => {
    const warnings: string[] = [];
    const v = createLocalValidator({ dnsServer: server.address, dnsTimeoutMs: 300, onWarning: (w) => warnings.push(w) });
    const dead = ['dead1.test', 'dead2.test', 'dead3.test', 'dead4.test'];
    try {
      for (const d of dead) server.zones[d] = { servfail: true };
      const before = server.queries.length;
      const verdicts = [];
      // one lookup after another: nothing answers while the dead ones fail
      for (const email of ['a@mx.test', ...dead.map((d) => `b@${d}`)]) verdicts.push(...(await v.validate([email], signal)));
      expect(verdicts.map((x) => [x.status, x.outage])).toEqual([['valid', undefined], ...dead.map(() => ['unknown', undefined])]);
      // the witness: a name under the domain that answered, which no cache holds
      expect(server.queries.slice(before)).toContainEqual(expect.stringMatching(/^MX mailsift-probe-[a-z0-9]+\.mx\.test$/));
      expect(warnings).toEqual([]);
      expect(v.dnsState()).toBe('ok');
    } finally {
      for (const d of dead) delete server.zones[d];
      await v.close();
    }
  });

  it('a resolver that invents addresses for missing names: A-only domains are unknown, MX still counts', async () => {
    const lying = await startDnsServer({ fallback: () => ({ a: ['192.0.2.99'] }) });
    const warnings: string[] = [];
    const v = createLocalValidator({ dnsServer: lying.address, dnsTimeoutMs: 300, onWarning: (w) => warnings.push(w) });
    const verdicts = await v.validate(['jane@mx.test', 'jane@whatever.test'], signal);
    await v.close();
    await lying.close();
    expect(verdicts.map((x) => x.status)).toEqual(['valid', 'unknown']);
    expect(warnings).toHaveLength(1);
  });
});

describe('a long-lived engine (serve) follows DNS as it changes', () => {
  it('reuses an answer for ANSWER_TTL_MS, then asks again', async () => {
    let now = 1_000_000;
    const { v } = engine({ clock: clockReading(() => now) });
    const asked = () => server.queries.filter((q) => q === 'MX late.test').length;
    const before = asked();
    const status = async () => (await v.validate(['jane@late.test'], signal))[0]!.status;
    try {
      expect(await status()).toBe('invalid'); // NXDOMAIN for now
      server.zones['late.test'] = { mx: [{ exchange: 'mail.late.test', priority: 10 }] };
      now += ANSWER_TTL_MS - 1;
      expect(await status()).toBe('invalid'); // still the cached answer
      expect(asked() - before).toBe(1);
      now += 2;
      expect(await status()).toBe('valid');
      expect(asked() - before).toBe(2);
    } finally {
      delete server.zones['late.test'];
      await v.close();
    }
  });

  it('gets over an outage: broken DNS is probed again after UNANSWERED_TTL_MS, and the recovery is told once', async () => {
    let now = 1_000_000;
    const flaky = await startDnsServer({ broken: true });
    const warnings: string[] = [];
    const v = createLocalValidator({ dnsServer: flaky.address, dnsTimeoutMs: 300, onWarning: (w) => warnings.push(w), clock: clockReading(() => now) });
    const status = async (email: string) => (await v.validate([email], signal))[0]!.status;
    try {
      expect(await status('jane@mx.test')).toBe('unknown');
      flaky.broken = false;
      expect(await status('jane@mx.test')).toBe('unknown'); // within the TTL: not asked again
      now += UNANSWERED_TTL_MS + 1;
      expect(await status('jane@mx.test')).toBe('valid');
      expect(await status('jane@nowhere.test')).toBe('invalid'); // negative answers count again
      expect(warnings).toHaveLength(2);
      expect(warnings[0]).toMatch(/DNS is unusable/);
      expect(warnings[1]).toMatch(/works again/);
    } finally {
      await v.close();
      await flaky.close();
    }
  });
});

describe('a server that is told it is not ready (serve) still sees DNS come back', () => {
  it('dnsState() probes before any lookup, and asks a failed domain again after UNANSWERED_TTL_MS without being asked', async () => {
    let now = 1_000_000;
    const flaky = await startDnsServer({ fallback: () => ({ servfail: true }) });
    const v = createLocalValidator({ dnsServer: flaky.address, dnsTimeoutMs: 300, clock: clockReading(() => now) });
    try {
      expect(v.dnsState()).toBe('ok'); // nothing known yet: the probe starts
      await waitFor(() => flaky.queries.includes('NS '), { what: 'the resolver probe (NS of the root)', timeoutMs: 3000 });
      await v.validate(['a@x1.test', 'b@x2.test', 'c@x3.test'], signal);
      expect(v.dnsState()).toBe('unusable');
      for (const d of ['x1.test', 'x2.test', 'x3.test']) flaky.zones[d] = { mx: [{ exchange: `mx.${d}`, priority: 10 }] };
      const asked = flaky.queries.length;
      expect(v.dnsState()).toBe('unusable');
      expect(flaky.queries.length).toBe(asked); // not before UNANSWERED_TTL_MS
      now += UNANSWERED_TTL_MS + 1;
      await waitFor(() => v.dnsState() === 'ok', { what: 'DNS to be judged usable again', timeoutMs: 3000 });
      // one domain asked again (c-ares may send a question twice)
      expect(new Set(flaky.queries.slice(asked))).toEqual(new Set([expect.stringMatching(/^MX x[123]\.test$/)]));
    } finally {
      await v.close();
      await flaky.close();
    }
  });
});

describe('--dns-server values', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['127.0.0.1:5353', '127.0.0.1:5353'],
    ['::1', '::1'],
    ['[::1]:5353', '[::1]:5353'],
  ])('%s → %s', (value, expected) => expect(parseDnsServer(value)).toBe(expected));

  it.each(['dns.example', '127.0.0.1:0', '127.0.0.1:99999', '127.0.0.1:x', ''])('refuses %j with a usage error', (value) => {
    expect(() => parseDnsServer(value)).toThrow(/--dns-server/);
  });
});
