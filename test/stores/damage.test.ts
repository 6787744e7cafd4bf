import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jobBinding } from '../../src/stores/binding.js';
import { openCache } from '../../src/stores/cache.js';
import { decodeVerdict } from '../../src/codec/verdict-encoding.js';
import { openJournal } from '../../src/stores/journal.js';

describe('numbers read back from a journal or a cache are range-checked', () => {
  it('a confidence out of 0..1 (1e999 reads as Infinity) makes the line damaged', () => {
    expect(decodeVerdict(JSON.parse('["a@b.io","v11100-",1e999,"p",1]'))).toBeUndefined();
    expect(decodeVerdict(['a@b.io', 'v11100-', -0.1, 'p', 1])).toBeUndefined();
    expect(decodeVerdict(['a@b.io', 'v11100-', 1.5, 'p', 1])).toBeUndefined();
    expect(decodeVerdict(['a@b.io', 'v11100-', 1, 'p', 1])?.confidence).toBe(1);
    expect(decodeVerdict(['a@b.io', 'v11100-', null, 'p', 1])?.confidence).toBeUndefined();
  });

  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mailsift-damage-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const binding = jobBinding({ engine: 'local' });

  it('a journal skips such a line: that address is asked again, never answered with Infinity', async () => {
    const path = join(dir, 'j.journal');
    const header = JSON.stringify({ mailsift: 'journal', version: 1, ...binding });
    await writeFile(path, `${header}\n["ok@b.io","v11100-",0.9,"p",1]\n["inf@b.io","v11100-",1e999,"p",1]\n`);
    const j = await openJournal(path, binding);
    try {
      expect(j.badLines).toBe(1);
      expect(j.get('ok@b.io')?.verdict.confidence).toBe(0.9);
      expect(j.get('inf@b.io')).toBeUndefined();
    } finally {
      await j.close();
    }
  });

  it('a cache skips a line whose time is not a time (1e999 would stay fresh forever)', async () => {
    const path = join(dir, 'c.cache');
    const header = JSON.stringify({ mailsift: 'cache', version: 1, ...binding });
    const now = Math.floor(Date.now() / 1000);
    // the good line last: damage at the end would be cut off as a torn tail
    await writeFile(path, `${header}\n[1e999,"inf@b.io","v11100-",0.9,"p",1]\n[${now},"c@b.io","v11100-",1e999,"p",1]\n[${now},"ok@b.io","v11100-",0.9,"p",1]\n`);
    const c = await openCache(path, { ttlMs: 86_400_000, binding });
    try {
      expect(c.fresh).toBe(1);
      expect(c.get('inf@b.io')).toBeUndefined();
      expect(c.get('c@b.io')).toBeUndefined();
    } finally {
      await c.close();
    }
    expect(await readFile(path, 'utf8')).toContain('inf@b.io'); // damaged lines in the middle are skipped, not erased
  });
});
