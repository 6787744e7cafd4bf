import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { addressKey, domainOf } from '../../src/codec/address-key.js';
import { VerdictMemo, type Claimed, type KeyHash } from '../../src/dedupe/verdict-memo.js';
import type { Verdict } from '../../src/verdict.js';
import { seeded } from '../support/fault-server.js';

/**
 * The memo's twin: the same contract on a plain Map, as simple as it can be
 * written. The memo keeps keys as bytes and verdicts as shared shapes to stay
 * small (a Map costs ~85 B per address against ~54 B, and stops at 16.7M
 * entries); whatever it does inside, it must answer exactly as this does.
 */
class MapMemo {
  private readonly byKey = new Map<string, { ticket: number; verdict?: Verdict; stored: boolean }>();
  private readonly keys: string[] = [];

  claim(key: string): Claimed {
    const e = this.byKey.get(key);
    if (!e) {
      this.byKey.set(key, { ticket: this.keys.length, stored: false });
      this.keys.push(key);
      return { kind: 'new', ticket: this.keys.length - 1 };
    }
    if (!e.verdict) return { kind: 'pending', ticket: e.ticket };
    if (!e.stored) return { kind: 'done', ticket: e.ticket };
    e.stored = false;
    return { kind: 'stored', ticket: e.ticket };
  }

  find(key: string): number {
    const e = this.byKey.get(key);
    return e?.verdict ? e.ticket : -1;
  }

  fulfil(_ticket: number, key: string, verdict: Verdict, stored = false): void {
    Object.assign(this.byKey.get(key)!, { verdict, stored });
  }

  verdictAt(ticket: number, _key: string, email: string): Verdict {
    return { ...this.byKey.get(this.keys[ticket]!)!.verdict!, email };
  }

  get size(): number {
    return this.keys.length;
  }
}

// Characters chosen to stress the memo's byte encoding (one byte below 0xff,
// three above, 0xff itself the escape) and the address key (case in the domain).
const UNITS = ['a', 'b', 'A', '.', '@', 'é', '\u00fe', '\u00ff', '\u0100', '\u4e00', '\uffff', '\ud800', '\udc00', '\u0000', '"', ' '];

function randomKey(next: () => number): string {
  const len = Math.floor(next() * 9);
  let s = '';
  for (let i = 0; i < len; i++) s += UNITS[Math.floor(next() * UNITS.length)];
  // mostly address-shaped, so that the domain-sharing path is taken too
  if (next() < 0.7) s += `@${['x.io', 'X.IO', 'y.io', 'x.i', 'é.io', ''][Math.floor(next() * 6)]}`;
  return addressKey(s);
}

/** The verdict an engine might give `key`: mostly a shared shape, sometimes one that cannot share. */
function randomVerdict(key: string, next: () => number): Verdict {
  const status = (['valid', 'invalid', 'risky', 'unknown'] as const)[Math.floor(next() * 4)]!;
  const r = next();
  const domain = key.includes('@') ? domainOf(key) : undefined;
  return {
    email: key,
    status,
    isValid: status === 'unknown' ? undefined : status === 'valid',
    confidence: r < 0.1 ? r : [0.9, 0.6, undefined][Math.floor(next() * 3)],
    provider: r < 0.05 ? `p${Math.floor(next() * 1000)}` : 'p',
    details: {
      syntax: next() < 0.9,
      ...(domain !== undefined && next() < 0.9 ? { domain } : {}),
      ...(next() < 0.1 ? { suggestion: `${key}m` } : {}),
      ...(next() < 0.2 ? { smtp: next() < 0.5, catchAll: next() < 0.5 } : {}),
    },
    ...(next() < 0.05 ? { error: { code: 'TIMEOUT', message: `after ${Math.floor(next() * 9)} s` } } : {}),
  };
}

/**
 * `ahead`: the memo is told now and then of keys to come (VerdictMemo.expect),
 * as the pipeline tells it of the rows it is about to route — with gaps, keys
 * that are then not claimed, and the same text in another string.
 */
function race(seed: number, steps: number, hash?: KeyHash, ahead = false): void {
  // seeded: a failure names its seed and replays
  const next = seeded(seed);
  const memo = new VerdictMemo(hash);
  const twin = new MapMemo();
  const pending: [number, string][] = [];
  const seen: string[] = [];
  /** the keys the next claims take, in order */
  const coming: string[] = [];
  for (let step = 0; step < steps; step++) {
    if (ahead && coming.length === 0 && next() < 0.2) {
      const told: (string | undefined)[] = [];
      for (let i = Math.floor(next() * 70); i > 0; i--) {
        const k = seen.length && next() < 0.4 ? seen[Math.floor(next() * seen.length)]! : randomKey(next);
        const t = next();
        told.push(t < 0.1 ? undefined : t < 0.15 ? `${k}x` : k);
        if (t >= 0.1) coming.push(t < 0.2 ? ` ${k}`.slice(1) : k);
      }
      memo.expect(told);
    }
    const r = next();
    const key = coming.length && r < 0.75 ? coming.shift()! : seen.length && r < 0.4 ? seen[Math.floor(next() * seen.length)]! : randomKey(next);
    if (r < 0.75) {
      const got = memo.claim(key);
      const want = twin.claim(key);
      // expect() only on a difference: a hundred thousand expect() calls cost seconds, the comparison microseconds
      if (!isDeepStrictEqual(got, want)) expect(got, `seed ${seed}, step ${step}: claim ${JSON.stringify(key)}`).toEqual(want);
      if (want.kind === 'new') {
        pending.push([want.ticket, key]);
        seen.push(key);
      }
      if (want.kind === 'done' || want.kind === 'stored') {
        const [mine, theirs] = [memo.verdictAt(got.ticket, key, `row:${key}`), twin.verdictAt(want.ticket, key, `row:${key}`)];
        if (!isDeepStrictEqual(mine, theirs)) expect(mine, `seed ${seed}, step ${step}`).toEqual(theirs);
      }
    } else if (r < 0.95 && pending.length) {
      const [ticket, k] = pending.splice(Math.floor(next() * pending.length), 1)[0]!;
      const v = randomVerdict(k, next);
      const stored = next() < 0.1;
      memo.fulfil(ticket, k, v, stored);
      twin.fulfil(ticket, k, v, stored);
    } else {
      const [mine, theirs] = [memo.find(key), twin.find(key)];
      if (mine !== theirs) expect(mine, `seed ${seed}, step ${step}: find ${JSON.stringify(key)}`).toBe(theirs);
    }
  }
  expect(memo.size).toBe(twin.size);
}

describe('the verdict memo answers exactly as a plain Map would', () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    it(`random keys and verdicts, seed ${seed}`, () => race(seed, 20_000));
  }

  it('every key colliding in one hash', () => race(11, 3_000, () => 7));

  it('hashes that differ only in bits a slot does not keep', () => race(12, 5_000, (k) => (k.length & 3) << 28));

  for (const seed of [21, 22, 23]) {
    it(`keys told of ahead, seed ${seed}`, () => race(seed, 20_000, undefined, true));
  }
  it('keys told of ahead, every key colliding in one hash', () => race(24, 3_000, () => 7, true));
});
