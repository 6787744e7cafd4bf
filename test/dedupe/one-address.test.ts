import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { parseCsv } from '../support/run-cli.js';
import { runInProcess } from '../support/run-in-process.js';
import { API_KEY, apiEnv, sentEmails } from '../stores/helpers.js';

// What one address is: the address key (src/codec/address-key.ts). Spellings
// of one mailbox are sent once and answered alike; a spelling the syntax
// refuses is never the address it folds to under Unicode's case rules.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mailsift-one-address-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** status and reason of each row of a CSV output, by its address */
function rowsOf(csv: string): string[][] {
  const [header, ...rows] = parseCsv(csv);
  const at = (name: string) => header!.indexOf(name);
  return rows.map((r) => [r[at('email')]!, r[at('status')]!, r[at('reason')]!]);
}

describe('KELVIN SIGN', () => {
  let dns: TestDnsServer;
  beforeEach(async () => {
    dns = await startDnsServer({ zones: { 'kelvin.com': { mx: [{ exchange: 'mx.kelvin.com', priority: 10 }] } } });
  });
  afterEach(async () => {
    await dns.close();
  });

  it('a@ + U+212A + elvin.com (refused by IDNA2008) is invalid, and a@kelvin.com stays valid, in the run and from the cache', async () => {
    const kelvin = 'a@\u212aelvin.com';
    const local = ['--engine', 'local', '--dns-server', dns.address, '--dns-timeout', '10000', '-q', '--cache', 'verdicts.cache'];
    await writeFile(join(dir, 'pair.txt'), `${kelvin}\na@kelvin.com\n`);
    const first = await runInProcess(['validate', 'pair.txt', ...local], { cwd: dir });
    expect(first.code, first.stderr).toBe(0);
    expect(rowsOf(first.stdout)).toEqual([
      [kelvin, 'invalid', 'syntax'],
      ['a@kelvin.com', 'valid', ''],
    ]);

    // the next run, with the real address alone: never the invalid spelling's verdict from the cache
    await writeFile(join(dir, 'real.txt'), 'a@kelvin.com\n');
    const second = await runInProcess(['validate', 'real.txt', ...local, '--summary', 'second.json'], { cwd: dir });
    expect(second.code, second.stderr).toBe(0);
    expect(rowsOf(second.stdout)).toEqual([['a@kelvin.com', 'valid', '']]);
    expect(JSON.parse(await readFile(join(dir, 'second.json'), 'utf8')).fromCache).toBe(1);
  }, 30_000);
});

describe('case variants of one mailbox', () => {
  let server: FaultServer;
  beforeEach(async () => {
    server = await startFaultServer({ apiKey: API_KEY });
  });
  afterEach(async () => {
    await server.close();
  });

  it('are one request, one journal and cache entry, the same verdict on every row under its own spelling; --unique keeps the first', async () => {
    const spellings = ['Jane.Doe@gmail.com', 'JANE.DOE@gmail.com', 'jane.doe@GMAIL.com'];
    await writeFile(join(dir, 'list.csv'), `id,email\n${spellings.map((e, i) => `${i + 1},${e}`).join('\n')}\n2b,other@gmail.com\n`);
    const args = ['validate', 'list.csv', '--journal', 'run.journal', '--cache', 'verdicts.cache', '--summary', 'summary.json'];
    const run = await runInProcess(args, { cwd: dir, env: apiEnv(server) });
    expect(run.code, run.stderr).toBe(0);
    // the test API's request log: one address for the three spellings
    expect(sentEmails(server).sort()).toEqual(['Jane.Doe@gmail.com', 'other@gmail.com']);
    expect(rowsOf(run.stdout)).toEqual([...spellings.map((e) => [e, 'valid', '']), ['other@gmail.com', 'valid', '']]);
    const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8'));
    expect(summary.duplicates).toBe(2);
    const recorded = (file: string) => readFile(join(dir, file), 'utf8').then((t) => t.split('\n').slice(1).filter(Boolean));
    expect(await recorded('run.journal')).toHaveLength(2);
    expect(await recorded('verdicts.cache')).toHaveLength(2);

    const unique = await runInProcess([...args, '--unique'], { cwd: dir, env: apiEnv(server) });
    expect(unique.code, unique.stderr).toBe(0);
    expect(rowsOf(unique.stdout).map((r) => r[0])).toEqual(['Jane.Doe@gmail.com', 'other@gmail.com']);

    // a later run with another spelling: answered from the cache, nothing sent
    const before = server.requests.length;
    await writeFile(join(dir, 'later.txt'), 'jane.doe@gmail.com\n');
    const later = await runInProcess(['validate', 'later.txt', '--cache', 'verdicts.cache'], { cwd: dir, env: apiEnv(server) });
    expect(later.code, later.stderr).toBe(0);
    expect(server.requests.length).toBe(before);
    expect(rowsOf(later.stdout)).toEqual([['jane.doe@gmail.com', 'valid', '']]);
  }, 30_000);

  it('a server that echoes lower case and refuses the KELVIN SIGN spelling: each row keeps its own answer, and the cache the real one', async () => {
    await server.close();
    const kelvin = 'a@\u212aelvin.com';
    // it judges the address as sent, then echoes it lower-cased: KELVIN SIGN lower-cased is k
    server = await startFaultServer({
      apiKey: API_KEY,
      lowercaseEcho: true,
      verdictFor: (e) => (e.includes('\u212a') ? { status: 'invalid', confidence: 0.99, mx: false } : { status: 'valid' }),
    });
    await writeFile(join(dir, 'pair.txt'), `${kelvin}\na@kelvin.com\n`);
    const run = await runInProcess(['validate', 'pair.txt', '--cache', 'verdicts.cache'], { cwd: dir, env: apiEnv(server) });
    expect(run.code, run.stderr).toBe(0);
    expect(sentEmails(server)).toEqual([kelvin, 'a@kelvin.com']);
    expect(rowsOf(run.stdout)).toEqual([
      [kelvin, 'invalid', 'no_mail_server'],
      ['a@kelvin.com', 'valid', ''],
    ]);
    await writeFile(join(dir, 'real.txt'), 'a@kelvin.com\n');
    const later = await runInProcess(['validate', 'real.txt', '--cache', 'verdicts.cache'], { cwd: dir, env: apiEnv(server) });
    expect(rowsOf(later.stdout)).toEqual([['a@kelvin.com', 'valid', '']]);
  }, 30_000);

  it('the answer reaches every spelling when the server echoes the address in another case', async () => {
    await server.close();
    server = await startFaultServer({ apiKey: API_KEY, lowercaseEcho: true });
    await writeFile(join(dir, 'list.txt'), 'Jane.Doe@Gmail.com\njane.doe@gmail.com\n');
    const run = await runInProcess(['validate', 'list.txt'], { cwd: dir, env: apiEnv(server) });
    expect(run.code, run.stderr).toBe(0);
    expect(sentEmails(server)).toEqual(['Jane.Doe@Gmail.com']);
    expect(rowsOf(run.stdout)).toEqual([
      ['Jane.Doe@Gmail.com', 'valid', ''],
      ['jane.doe@gmail.com', 'valid', ''],
    ]);
  }, 30_000);
});
