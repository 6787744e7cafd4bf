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
  /** answered by a store (the journal) before the run, and claimed for the first time now */
  Stored: 3,
} as const;
export type Claim = (typeof Claim)[keyof typeof Claim];

/** a table slot no address holds; otherwise a slot holds its ticket + 1 */
const EMPTY = 0;
/** an answer not given yet; otherwise shape + 1, or WHOLE */
const PENDING = 0;
/** the verdict is kept whole in the side map */
const WHOLE = 0xffff;
const MAX_SHAPES = WHOLE - 1;

/** A 32-bit hash of a key: it chooses the slot, never decides equality. */
export type KeyHash = (key: string) => number;

/**
 * Every distinct address of the run, pending or answered, so that each is sent
 * once and a duplicate row later in the input gets its verdict without a second
 * request. The journal keeps its index in one too.
 *
 * It must hold a million addresses in little memory (PRODUCT.md §5: memory stays
 * flat), so it keeps no string or object per address: the keys side by side in
 * a few large strings (see KeyArena), and the index of a shared verdict "shape"
 * (the verdict without its address) in two bytes. Most verdicts of a run share
 * a handful of shapes; verdicts that cannot share one (a suggestion, an unusual
 * domain) are kept whole in a side map.
 *
 * An address is looked up once, when its row is read (`claim`), and gets a
 * ticket: the number of addresses claimed before it. The open-addressing table
 * maps a hash to tickets; a ticket is taken as the address's only when its key,
 * kept in the arena, is the same string — a hash that collides (by chance or by
 * a list crafted to) costs a probe, never a verdict. The answer is filed under
 * the ticket (`fulfil`) in a second, dense array.
 */
export class VerdictMemo {
  private capacity = 1 << 21;
  /** slots of [hash, ticket + 1], side by side so that a probe touches one cache line */
  private table = new Uint32Array(this.capacity * 2);
  /** by ticket: PENDING, WHOLE or shape + 1 (two bytes: a run has a handful of shapes) */
  private answers = new Uint16Array(this.capacity);
  /** by ticket: 1 while a verdict filed from a store has not been claimed (see Claim.Stored) */
  private stored = new Uint8Array(this.capacity);
  private readonly keys = new KeyArena();
  private count = 0;
  private readonly shapes: Verdict[] = [];
  private readonly shapeIds = new Map<string, number>();
  private readonly whole = new Map<number, Verdict>();
  private lastShape = 0;
  /** what the last `claim()` found */
  claimed: Claim = Claim.New;

  /** `hash` is injectable so that a test can make every key collide. */
  constructor(private readonly hash: KeyHash = hashKey) {}

  get size(): number {
    return this.count;
  }

  /** Finds `key`, marking it pending if it was not there; returns its ticket (see `claimed`). */
  claim(key: string): number {
    if ((this.count + 1) * 2 > this.capacity) this.grow();
    const h = this.hash(key) >>> 0;
    const t = this.table;
    const mask = this.capacity - 1;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const v = t[i * 2 + 1]!;
      if (v === EMPTY) {
        t[i * 2] = h;
        t[i * 2 + 1] = this.count + 1;
        this.keys.add(this.count, key);
        this.claimed = Claim.New;
        return this.count++;
      }
      if (t[i * 2] === h && this.keys.equals(v - 1, key)) {
        const ticket = v - 1;
        if (this.answers[ticket] === PENDING) this.claimed = Claim.Pending;
        else if (this.stored[ticket] === 0) this.claimed = Claim.Done;
        else {
          this.stored[ticket] = 0;
          this.claimed = Claim.Stored;
        }
        return ticket;
      }
    }
  }

  /** The ticket of an answered address (for `verdictAt`), or -1; unlike `claim`, adds nothing. */
  find(key: string): number {
    const h = this.hash(key) >>> 0;
    const t = this.table;
    const mask = this.capacity - 1;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const v = t[i * 2 + 1]!;
      if (v === EMPTY) return -1;
      if (t[i * 2] === h && this.keys.equals(v - 1, key)) return this.answers[v - 1] === PENDING ? -1 : v - 1;
    }
  }

  /**
   * Files the verdict of a claimed address under its ticket; `key` is the
   * address claimed. `stored`: the verdict comes from a store loaded before the
   * run, and the run's first claim of it says Claim.Stored.
   */
  fulfil(ticket: number, key: string, verdict: Verdict, stored = false): void {
    if (stored) this.stored[ticket] = 1;
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
    this.table = new Uint32Array(this.capacity * 2);
    const t = this.table;
    const mask = this.capacity - 1;
    for (let j = 0; j < old.length; j += 2) {
      if (old[j + 1] === EMPTY) continue;
      let i = old[j]! & mask;
      while (t[i * 2 + 1] !== EMPTY) i = (i + 1) & mask;
      t[i * 2] = old[j]!;
      t[i * 2 + 1] = old[j + 1]!;
    }
    // tickets stay valid: only the table moves
    const answers = new Uint16Array(this.capacity);
    answers.set(this.answers);
    this.answers = answers;
    const stored = new Uint8Array(this.capacity);
    stored.set(this.stored);
    this.stored = stored;
  }
}

/**
 * The keys by ticket, without a string per key (a million strings cost about
 * 60 MB more than their characters, and keep the garbage collector busy):
 * every CHUNK consecutive keys are joined into one flat string, and a key is
 * found again by where it ends in its chunk. Joining copies the characters, so
 * a key sliced from a large input chunk or journal line does not keep that
 * alive for the rest of the run. (Bytes in buffers outside the JS heap, copied
 * in a loop, cost about 40% more CPU per run in `npm run bench core`.)
 */
class KeyArena {
  private readonly chunks: string[] = [];
  /** keys of the chunk being filled, as given */
  private recent: string[] = [];
  private recentLength = 0;
  /** by ticket: where its key ends in its chunk */
  private ends = new Uint32Array(1 << 16);

  /** Adds the key of `ticket`, which is the number of keys added so far. */
  add(ticket: number, key: string): void {
    if (ticket >= this.ends.length) {
      const ends = new Uint32Array(this.ends.length * 2);
      ends.set(this.ends);
      this.ends = ends;
    }
    this.recent.push(key);
    this.recentLength += key.length;
    this.ends[ticket] = this.recentLength;
    if (this.recent.length === CHUNK) {
      this.chunks.push(this.recent.join(''));
      this.recent = [];
      this.recentLength = 0;
    }
  }

  /** Whether `ticket`'s key is `key`. */
  equals(ticket: number, key: string): boolean {
    const c = ticket >>> CHUNK_BITS;
    const i = ticket & (CHUNK - 1);
    if (c === this.chunks.length) return this.recent[i] === key;
    const start = i === 0 ? 0 : this.ends[ticket - 1]!;
    return this.ends[ticket]! - start === key.length && this.chunks[c]!.startsWith(key, start);
  }
}

const CHUNK_BITS = 12;
const CHUNK = 1 << CHUNK_BITS;

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

/** Seeded per run, so that a list cannot be crafted in advance to pile its addresses into one run of slots. */
const SEED = (Math.random() * 0x100000000) >>> 0;

/**
 * A 32-bit hash of the UTF-16 code units, taken two at a time (it runs once
 * per input row): FNV-1a-style, finished with murmur3's avalanche.
 */
export function hashKey(s: string): number {
  let a = 0x811c9dc5 ^ SEED ^ s.length;
  const n = s.length - 1;
  let i = 0;
  for (; i < n; i += 2) a = Math.imul(a ^ (s.charCodeAt(i) | (s.charCodeAt(i + 1) << 16)), 0x01000193);
  if (i === n) a = Math.imul(a ^ s.charCodeAt(i), 0x01000193);
  a ^= a >>> 16;
  a = Math.imul(a, 0x85ebca6b);
  a ^= a >>> 13;
  a = Math.imul(a, 0xc2b2ae35);
  a ^= a >>> 16;
  return a >>> 0;
}
