import type { Verdict } from '../verdict.js';
import { domainOf, isDomainOf } from './address-key.js';

/** What `claim()` found for an address. */
export const Claim = {
  /** first sight: the address is now pending, and the caller must fulfil it */
  New: 0,
  /** already sent, not answered yet */
  Pending: 1,
  /** answered: `verdictAt()` gives the verdict */
  Done: 2,
} as const;
export type Claim = (typeof Claim)[keyof typeof Claim];

/** a table slot no address holds; otherwise a slot holds its ticket + 1 */
const EMPTY = 0;
/** an answer not given yet; otherwise shape + 1, or WHOLE */
const PENDING = 0;
/** the verdict is kept whole in the side map */
const WHOLE = 0xffff;
const MAX_SHAPES = WHOLE - 1;

/**
 * Every distinct address of the run, pending or answered, so that each is sent
 * once and a duplicate row later in the input gets its verdict without a second
 * request.
 *
 * It must hold a million addresses in little memory (PRODUCT.md §5: memory stays
 * flat), so it keeps no strings: a 64-bit hash of the address and the index of
 * a shared verdict "shape" (the verdict without its address). Most verdicts of a
 * run share a handful of shapes. The 2^21-slot table is allocated up front so
 * that the footprint does not grow until a run passes a million distinct
 * addresses (32 MB; the answers add 2 bytes per address). Two addresses with
 * the same 64-bit hash (odds ~3e-8 at 1M addresses) would share a verdict;
 * verdicts that cannot share a shape (a suggestion, an unusual domain) are
 * kept whole in a side map.
 *
 * An address is looked up once, when its row is read (`claim`), and gets a
 * ticket: the number of addresses claimed before it. Its answer is filed under
 * the ticket (`fulfil`) in a second, dense array. The hash table is too big for
 * the CPU's caches, so each look-up there costs a trip to memory; answers come
 * back in about the order of their tickets, so filing them costs next to nothing.
 */
export class VerdictMemo {
  private capacity = 1 << 21;
  /**
   * Slots of [hash hi, hash lo, ticket + 1, unused], side by side so that a probe
   * touches one cache line, not three.
   */
  private table = new Uint32Array(this.capacity * 4);
  /** by ticket: PENDING, WHOLE or shape + 1 (two bytes: a run has a handful of shapes) */
  private answers = new Uint16Array(this.capacity);
  private count = 0;
  private readonly shapes: Verdict[] = [];
  private readonly shapeIds = new Map<string, number>();
  private readonly whole = new Map<number, Verdict>();
  private lastShape = 0;
  /** what the last `claim()` found */
  claimed: Claim = Claim.New;
  /** hashes taken by `prefetch`, for the claims that follow it in order */
  private ahead: { keys: readonly (string | undefined)[]; n: number; next: number } = { keys: [], n: 0, next: 0 };
  private aheadHi = new Uint32Array(64);
  private aheadLo = new Uint32Array(64);
  /** read by nothing: keeps the prefetching loads from being optimised away */
  private touched = 0;

  get size(): number {
    return this.count;
  }

  /**
   * Starts loading the slots of the next claims, `keys[0..n)` (undefined: no
   * claim). The table is too big for the CPU's caches: one claim at a time, every
   * row waits for memory; these loads run side by side, and the claims that
   * follow find their slots in the cache.
   */
  prefetch(keys: readonly (string | undefined)[], n: number): void {
    if (this.aheadHi.length < n) {
      this.aheadHi = new Uint32Array(n);
      this.aheadLo = new Uint32Array(n);
    }
    const hi = this.aheadHi;
    const lo = this.aheadLo;
    for (let j = 0; j < n; j++) {
      const key = keys[j];
      if (key === undefined) continue;
      hash64(key);
      hi[j] = hashHi;
      lo[j] = hashLo;
    }
    const t = this.table;
    const mask = this.capacity - 1;
    let touched = 0;
    for (let j = 0; j < n; j++) if (keys[j] !== undefined) touched += t[(lo[j]! & mask) * 4 + 2]!;
    this.touched = touched;
    this.ahead = { keys, n, next: 0 };
  }

  /** Finds `key`, marking it pending if it was not there; returns its ticket (see `claimed`). */
  claim(key: string): number {
    if ((this.count + 1) * 2 > this.capacity) this.grow();
    this.hashOf(key);
    const t = this.table;
    const mask = this.capacity - 1;
    for (let i = hashLo & mask; ; i = (i + 1) & mask) {
      const at = i * 4;
      const v = t[at + 2]!;
      if (v === EMPTY) {
        t[at] = hashHi;
        t[at + 1] = hashLo;
        t[at + 2] = ++this.count;
        this.claimed = Claim.New;
        return this.count - 1;
      }
      if (t[at] === hashHi && t[at + 1] === hashLo) {
        this.claimed = this.answers[v - 1] === PENDING ? Claim.Pending : Claim.Done;
        return v - 1;
      }
    }
  }

  /** Sets hashHi and hashLo: taken by `prefetch` if `key` is the next one it saw, else computed. */
  private hashOf(key: string): void {
    const a = this.ahead;
    while (a.next < a.n && a.keys[a.next] === undefined) a.next++;
    if (a.next < a.n && a.keys[a.next] === key) {
      hashHi = this.aheadHi[a.next]!;
      hashLo = this.aheadLo[a.next]!;
      a.next++;
    } else {
      hash64(key);
    }
  }

  /** The ticket of an answered address (for `verdictAt`), or -1; unlike `claim`, adds nothing. */
  find(key: string): number {
    hash64(key);
    const t = this.table;
    const mask = this.capacity - 1;
    for (let i = hashLo & mask; ; i = (i + 1) & mask) {
      const v = t[i * 4 + 2]!;
      if (v === EMPTY) return -1;
      if (t[i * 4] === hashHi && t[i * 4 + 1] === hashLo) return this.answers[v - 1] === PENDING ? -1 : v - 1;
    }
  }

  /** Files the verdict of a claimed address under its ticket; `key` is the address claimed. */
  fulfil(ticket: number, key: string, verdict: Verdict): void {
    const domain = verdict.details.domain;
    const shaped = verdict.details.suggestion === undefined && (domain === undefined || isDomainOf(domain, key));
    const shape = shaped ? this.shapeOf(verdict) : -1;
    if (shape < 0) this.whole.set(ticket, verdict);
    this.answers[ticket] = shape < 0 ? WHOLE : shape + 1;
  }

  /** The verdict of an answered address, re-addressed to `email` (the row's own spelling). */
  verdictAt(ticket: number, key: string, email: string): Verdict {
    const id = this.answers[ticket]!;
    if (id === WHOLE) {
      const whole = this.whole.get(ticket)!;
      return whole.email === email ? whole : { ...whole, email };
    }
    const shape = this.shapes[id - 1]!;
    const details = shape.details.domain === undefined ? shape.details : { ...shape.details, domain: domainOf(key) };
    return { ...shape, email, details };
  }

  /** The index of `v`'s shape, added if new; -1 once the table is full. */
  private shapeOf(v: Verdict): number {
    // Verdicts come in runs of the same shape: try the last one before building a key.
    const last = this.shapes[this.lastShape];
    if (last !== undefined && sameShape(last, v)) return this.lastShape;
    const id = this.shapeIdOf(v);
    if (id >= 0) this.lastShape = id;
    return id;
  }

  private shapeIdOf(v: Verdict): number {
    const d = v.details;
    // One number for the flags (cheaper than a string per field), plus the strings.
    const flags =
      STATUS_BITS[v.status] | (tri(v.isValid) << 2) | (tri(d.syntax) << 4) | (tri(d.mx) << 6) |
      (tri(d.disposable) << 8) | (tri(d.role) << 10) | (tri(d.free) << 12) | (d.domain === undefined ? 0 : 1 << 14) |
      (tri(d.smtp) << 15) | (tri(d.catchAll) << 17);
    const sig = v.error
      ? `${flags}|${v.confidence}|${v.provider}|${v.error.code}|${v.error.message}`
      : `${flags}|${v.confidence}|${v.provider}`;
    let id = this.shapeIds.get(sig);
    if (id === undefined) {
      // A server whose confidences are never alike: past this many shapes, verdicts are kept whole.
      if (this.shapes.length >= MAX_SHAPES) return -1;
      id = this.shapes.length;
      this.shapes.push({ ...v, email: '', details: d.domain === undefined ? { ...d } : { ...d, domain: '' } });
      this.shapeIds.set(sig, id);
    }
    return id;
  }

  private grow(): void {
    const old = this.table;
    this.capacity *= 2;
    this.table = new Uint32Array(this.capacity * 4);
    const t = this.table;
    const mask = this.capacity - 1;
    for (let j = 0; j < old.length; j += 4) {
      if (old[j + 2] === EMPTY) continue;
      let i = old[j + 1]! & mask;
      while (t[i * 4 + 2] !== EMPTY) i = (i + 1) & mask;
      t.set(old.subarray(j, j + 3), i * 4);
    }
    // tickets stay valid: only the table moves
    const answers = new Uint16Array(this.capacity);
    answers.set(this.answers);
    this.answers = answers;
  }
}

/** Whether `v` has the shape `shape` (a verdict stored without address and domain). */
function sameShape(shape: Verdict, v: Verdict): boolean {
  const a = shape.details;
  const b = v.details;
  return shape.status === v.status && shape.isValid === v.isValid && shape.confidence === v.confidence &&
    shape.provider === v.provider && a.syntax === b.syntax && a.mx === b.mx && a.disposable === b.disposable &&
    a.role === b.role && a.free === b.free && (a.domain === undefined) === (b.domain === undefined) &&
    a.smtp === b.smtp && a.catchAll === b.catchAll &&
    shape.error?.code === v.error?.code && shape.error?.message === v.error?.message;
}

const STATUS_BITS = { valid: 0, invalid: 1, risky: 2, unknown: 3 } as const;
const tri = (b: boolean | undefined): number => (b === undefined ? 0 : b ? 1 : 2);

// hash64's result, in two module variables rather than a fresh array per call.
let hashHi = 0;
let hashLo = 0;

/**
 * Two independent 32-bit hashes of the UTF-16 code units, taken two at a time
 * (the hash runs once per input row): an FNV-1a-style and a murmur-style lane,
 * each finished with murmur3's avalanche.
 */
function hash64(s: string): void {
  let a = 0x811c9dc5 ^ s.length;
  let b = 0x9747b28c;
  const n = s.length - 1;
  let i = 0;
  for (; i < n; i += 2) {
    const c = s.charCodeAt(i) | (s.charCodeAt(i + 1) << 16);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  if (i === n) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  a ^= a >>> 16;
  a = Math.imul(a, 0x85ebca6b);
  a ^= a >>> 13;
  a = Math.imul(a, 0xc2b2ae35);
  a ^= a >>> 16;
  b ^= b >>> 16;
  b = Math.imul(b, 0x85ebca6b);
  b ^= b >>> 13;
  b = Math.imul(b, 0xc2b2ae35);
  b ^= b >>> 16;
  hashHi = b >>> 0;
  hashLo = a >>> 0;
}
