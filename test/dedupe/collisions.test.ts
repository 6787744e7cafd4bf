import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addressKey } from '../../src/codec/address-key.js';
import { Dedupe } from '../../src/dedupe/dedupe.js';
import { VerdictMemo } from '../../src/dedupe/verdict-memo.js';
import { jobBinding } from '../../src/stores/binding.js';
import { openCache } from '../../src/stores/cache.js';
import { openJournal } from '../../src/stores/journal.js';
import { validateStream } from '../../src/pipeline/validate-stream.js';
import type { InputRow } from '../../src/read/input-row.js';
import type { Summary } from '../../src/summary.js';
import type { Validator } from '../../src/engines/validator.js';
import type { Verdict } from '../../src/verdict.js';

/** Every key hashes alike: only comparing the keys themselves can tell them apart. */
const degenerate = (): number => 7;

const verdict = (email: string, status: Verdict['status']): Verdict => ({
  email,
  status,
  isValid: status === 'valid',
  confidence: 0.9,
  provider: 'p',
  details: { syntax: true, domain: email.slice(email.lastIndexOf('@') + 1).toLowerCase() },
});
/** what the engine in these tests says: the status is in the address */
const statusOf = (email: string): Verdict['status'] => (email.startsWith('bad') ? 'invalid' : 'valid');

// Keys of one length and one tail, and keys that are prefixes of each other.
const emails = ['ann@x.io', 'bob@x.io', 'bad1@x.io', 'bad2@x.io', 'a@x.io', 'ab@x.io', 'b@ab.io', 'ann@X.IO', 'Ann@x.io'];

describe('a hash that collides for every key', () => {
  it('the memo tells keys apart, through growth', () => {
    const memo = new VerdictMemo(degenerate);
    const keys = Array.from({ length: 5000 }, (_, i) => `u${i}@d.io`); // past a joined chunk of keys
    const tickets = keys.map((k) => memo.claim(k).ticket);
    expect(new Set(tickets).size).toBe(keys.length);
    keys.forEach((k, i) => memo.fulfil(tickets[i]!, k, verdict(k, i % 2 ? 'invalid' : 'valid')));
    for (const i of [0, 1, 4095, 4096, 4999]) {
      expect(memo.verdictAt(memo.find(keys[i]!), keys[i]!, keys[i]!).status).toBe(i % 2 ? 'invalid' : 'valid');
    }
    expect(memo.find('u5000@d.io')).toBe(-1);
    expect(memo.find('u1@d.i')).toBe(-1);
  });

  it('every row comes out with its own address’s verdict, each address sent once', async () => {
    const rows = [...emails, ...emails].map((email): InputRow => ({ fields: [email], email }));
    const sent: string[] = [];
    const validator: Validator = {
      engine: 'api',
      validate: async (batch) => {
        sent.push(...batch);
        return batch.map((e) => verdict(e, statusOf(e)));
      },
      stats: () => ({ requests: 0, retries: 0, rateLimited: 0 }),
      close: async () => {},
    };
    const out: Verdict[] = [];
    const { summary } = await validateStream({
      input: {
        kind: 'text',
        header: ['email'],
        emailColumn: 0,
        rows: (async function* () {
          yield rows.slice(0, 5);
          yield rows.slice(5);
        })(),
        close: () => {},
      },
      validator,
      writer: { begin: async () => {}, row: (_f, v) => void out.push(v), drain: async () => {}, end: async (_s: Summary) => {} },
      batchSize: 3,
      concurrency: 2,
      dedupe: new Dedupe({ hash: degenerate }),
    });
    expect(out.map((v) => v.email)).toEqual(rows.map((r) => r.email));
    for (const v of out) expect(v.status).toBe(statusOf(v.email));
    // 'ann@X.IO' and 'Ann@x.io' are 'ann@x.io' (the address key ignores ASCII case)
    expect(sent.sort()).toEqual(emails.filter((e) => e !== 'ann@X.IO' && e !== 'Ann@x.io').sort());
    expect(summary.duplicates).toBe(emails.length + 2);
  });

  describe('stores', () => {
    let dir: string;
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'mailsift-collide-'));
    });
    afterEach(async () => {
      await rm(dir, { recursive: true, force: true });
    });
    const binding = jobBinding({ engine: 'api', baseUrl: 'http://127.0.0.1:1' });

    it('a journal answers only for the addresses it holds', async () => {
      const path = join(dir, 'j.journal');
      const held = emails.filter((_, i) => i % 2 === 0);
      const j1 = await openJournal(path, binding, 'api', degenerate);
      await j1.record(held.map((e) => verdict(e, statusOf(e))));
      await j1.close();
      const j2 = await openJournal(path, binding, 'api', degenerate);
      try {
        for (const e of emails) {
          const own = held.some((h) => addressKey(h) === addressKey(e));
          expect(j2.get(e)?.verdict.status, e).toBe(own ? statusOf(e) : undefined);
        }
      } finally {
        await j2.close();
      }
    });

    it('a cache answers only for the addresses it holds (it compares whole keys)', async () => {
      const path = join(dir, 'c.cache');
      // two addresses whose 64-bit hash was the same in the memo deduplication once trusted
      const pair = ['NWBQ0UJH\u5000\u4e00x@example.com', 'YfVuEFYd\u5c0f\u5f7dx@example.com'];
      const c1 = await openCache(path, { ttlMs: 86_400_000, binding, evidence: 'api' });
      await c1.record([verdict(pair[0]!, 'valid')]);
      await c1.close();
      const c2 = await openCache(path, { ttlMs: 86_400_000, binding, evidence: 'api' });
      try {
        expect(c2.get(pair[0]!)?.verdict.status).toBe('valid');
        expect(c2.get(pair[1]!)).toBeUndefined();
      } finally {
        await c2.close();
      }
    });
  });
});
