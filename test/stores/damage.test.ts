import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jobBinding } from '../../src/stores/binding.js';
import { openCache } from '../../src/stores/cache.js';
import { openJournal } from '../../src/stores/journal.js';
import type { KnownVerdicts } from '../../src/stores/known-verdicts.js';
import type { Unused } from '../../src/stores/unused.js';
import type { Verdict } from '../../src/verdict.js';
import { seeded } from '../support/fault-server.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mailsift-damage-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});
const binding = jobBinding({ engine: 'local' });
const seal = (body: string): string => `${body},"${crc32(body).toString(16).padStart(8, '0')}"]`;

describe('numbers read back from a journal or a cache are range-checked, even under a checksum that holds', () => {
  it('a journal skips a confidence out of 0..1 (1e999 reads as Infinity): that address is asked again', async () => {
    const path = join(dir, 'j.journal');
    const header = JSON.stringify({ mailsift: 'journal', version: 2, ...binding });
    await writeFile(path, `${header}\n${seal('["ok@b.io","v11100-d",0.9,"p",1')}\n${seal('["inf@b.io","v11100-d",1e999,"p",1')}\n`);
    const j = await openJournal(path, binding, 'dns');
    try {
      expect(j.badLines).toBe(1);
      expect(j.get('ok@b.io')?.verdict.confidence).toBe(0.9);
      expect(j.get('inf@b.io')).toBeUndefined();
    } finally {
      await j.close();
    }
  });

  it('a cache skips a line whose time is not a time (1e999 would stay fresh forever), or lies beyond tomorrow', async () => {
    const path = join(dir, 'c.cache');
    const header = JSON.stringify({ mailsift: 'cache', version: 2, ...binding });
    const now = Math.floor(Date.now() / 1000);
    const lines = [
      seal('[1e999,"inf@b.io","v11100-d",0.9,"p",1'),
      seal(`[${now + 3 * 86_400},"future@b.io","v11100-d",0.9,"p",1`),
      seal(`[${now},"c@b.io","v11100-d",1e999,"p",1`),
      // the good line last: damage at the end would be cut off as a torn tail
      seal(`[${now},"ok@b.io","v11100-d",0.9,"p",1`),
    ];
    await writeFile(path, `${header}\n${lines.join('\n')}\n`);
    const c = await openCache(path, { ttlMs: 86_400_000, binding, evidence: 'dns' });
    try {
      expect(c.fresh).toBe(1);
      expect(c.unused.damaged).toBe(3);
      for (const e of ['inf@b.io', 'future@b.io', 'c@b.io']) expect(c.get(e)).toBeUndefined();
    } finally {
      await c.close();
    }
    expect(await readFile(path, 'utf8')).toContain('inf@b.io'); // damaged lines in the middle are skipped, not erased
  });
});

/** verdicts of every kind a store holds, fields told and not */
const VERDICTS: Verdict[] = [
  {
    email: 'ann@example.com',
    isValid: true,
    status: 'valid',
    confidence: 0.9,
    provider: 'mailsift-local',
    details: { syntax: true, domain: 'example.com', mx: true, disposable: false, role: false, free: false },
  },
  {
    email: 'bob@gmial.com',
    isValid: true,
    status: 'risky',
    confidence: 0.7,
    provider: 'mailsift-local',
    details: { syntax: true, domain: 'gmial.com', mx: true, disposable: false, role: false, free: false, suggestion: 'bob@gmail.com' },
  },
  {
    email: 'cy@nowhere.test',
    isValid: false,
    status: 'invalid',
    confidence: 0.95,
    provider: 'mailsift-local',
    details: { syntax: true, domain: 'nowhere.test', mx: false, disposable: false, role: false, free: false, dnsFailure: 'nxdomain' },
  },
  {
    email: 'info@example.com',
    isValid: true,
    status: 'risky',
    confidence: 0.9,
    provider: 'mailsift-local',
    details: { syntax: true, domain: 'example.com', mx: true, disposable: false, role: true, free: false },
  },
  {
    email: 'dee@example.org',
    isValid: true,
    status: 'valid',
    confidence: 0.97,
    provider: 'mailsift-local',
    details: { syntax: true, domain: 'example.org', mx: true, disposable: false, role: false, free: false, smtp: true, catchAll: false },
  },
  {
    email: 'gone@example.org',
    isValid: false,
    status: 'invalid',
    confidence: 0.95,
    provider: 'mailsift-local',
    details: { syntax: true, domain: 'example.org', mx: true, disposable: false, role: false, free: false, smtp: false, catchAll: false },
  },
  {
    email: 'full@example.org',
    isValid: true,
    status: 'risky',
    confidence: 0.8,
    provider: 'mailsift-local',
    details: { syntax: true, domain: 'example.org', mx: true, disposable: false, role: false, free: false, smtp: false, catchAll: false, mailbox: 'full' },
  },
  {
    email: 'x@mailinator.com',
    isValid: true,
    status: 'risky',
    confidence: 0.9,
    provider: 'mailsift-local',
    details: { syntax: true, domain: 'mailinator.com', mx: true, disposable: true, role: false, free: false },
  },
  {
    email: 'null@nullmx.test',
    isValid: false,
    status: 'invalid',
    confidence: 0.99,
    provider: 'mailsift-local',
    details: { syntax: true, domain: 'nullmx.test', mx: false, disposable: false, role: false, free: false, dnsFailure: 'null-mx' },
  },
  {
    email: 'jörg@xn--bcher-kva.de',
    isValid: true,
    status: 'valid',
    confidence: 0.9,
    provider: 'mailsift-local',
    details: { syntax: true, domain: 'xn--bcher-kva.de', mx: true, disposable: false, role: false, free: false },
  },
  { email: 'no at sign', isValid: false, status: 'invalid', confidence: 1, provider: 'mailsift-local', details: { syntax: false } },
  {
    email: 'last@example.com',
    isValid: true,
    status: 'valid',
    confidence: 0.9,
    provider: 'mailsift-local',
    details: { syntax: true, domain: 'example.com', mx: true, disposable: false, role: false, free: false },
  },
];

type Opened = KnownVerdicts & { unused: Unused };

describe('single-bit flips in a journal or a cache are never read as another verdict (a CRC per record)', () => {
  it.each<[string, (path: string) => Promise<Opened>]>([
    ['journal', (path) => openJournal(path, binding, 'smtp')],
    ['cache', (path) => openCache(path, { ttlMs: 30 * 86_400_000, binding, evidence: 'smtp' })],
  ])('%s: 200 flips anywhere in the file: refused whole (exit 2), or each record read as written or asked again, the damage counted', async (_kind, open) => {
    const pristine = join(dir, 'pristine');
    const store = await open(pristine);
    await store.record(VERDICTS);
    await store.close();
    const bytes = await readFile(pristine);
    const headerEnd = bytes.indexOf(0x0a) + 1;
    const random = seeded(405);
    // the 200 flips drawn first, in the seed's order; then tried eight at a time, each in a
    // file of its own: opening and closing a store waits for the disk, and the waits overlap
    const flips = Array.from({ length: 200 }, () => {
      const at = Math.floor(random() * bytes.length);
      return { at, bit: Math.floor(random() * 8) };
    });
    let refused = 0;
    let damage = 0;
    const tryFlip = async ({ at, bit }: { at: number; bit: number }, n: number): Promise<void> => {
      const path = join(dir, `flipped-${n}`);
      const flipped = Buffer.from(bytes);
      flipped[at]! ^= 1 << bit;
      await writeFile(path, flipped);
      const opened = await open(path).catch((err: unknown) => err as Error & { exitCode?: number });
      if (opened instanceof Error) {
        // a damaged header: the file is refused with a one-line error, never read
        expect(opened.exitCode, `flip at ${at}: ${opened.message}`).toBe(2);
        expect(at).toBeLessThan(headerEnd + 1);
        refused++;
        return;
      }
      try {
        let missing = 0;
        for (const v of VERDICTS) {
          const got = opened.get(v.email)?.verdict;
          if (got === undefined) missing++;
          else expect(JSON.stringify(got), `flip at byte ${at}`).toBe(JSON.stringify(v));
        }
        if (at >= headerEnd) {
          expect(missing, `flip at byte ${at}: a record lost`).toBeGreaterThan(0);
          expect(opened.unused.damaged, `flip at byte ${at}: damage not counted`).toBeGreaterThan(0);
          damage++;
        }
      } finally {
        await opened.close();
      }
    };
    for (let from = 0; from < flips.length; from += 8) {
      await Promise.all(flips.slice(from, from + 8).map((flip, i) => tryFlip(flip, from + i)));
    }
    expect(refused + damage).toBeGreaterThan(150);
  });
});
