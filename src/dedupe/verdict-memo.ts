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
  private readonly keys: KeyArena;
  private count = 0;
  private readonly shapes: Verdict[] = [];
  private readonly shapeIds = new Map<string, number>();
  private readonly whole = new Map<number, Verdict>();
  private lastShape = 0;
  /** what the last `claim()` found */
  claimed: Claim = Claim.New;

  /** `hash` is injectable so that a test can make every key collide. */
  constructor(hash?: KeyHash) {
    this.keys = new KeyArena(hash);
  }

  get size(): number {
    return this.count;
  }

  /** Finds `key`, marking it pending if it was not there; returns its ticket (see `claimed`). */
  claim(key: string): number {
    if ((this.count + 1) * 2 > this.capacity) this.grow();
    const h = this.keys.locate(key, true);
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
      if (t[i * 2] === h && this.keys.matches(v - 1, key)) {
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
    const h = this.keys.locate(key, false);
    const t = this.table;
    const mask = this.capacity - 1;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const v = t[i * 2 + 1]!;
      if (v === EMPTY) return -1;
      if (t[i * 2] === h && this.keys.matches(v - 1, key)) return this.answers[v - 1] === PENDING ? -1 : v - 1;
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
 * alive for the rest of the run.
 *
 * The domain — the part after the last `@` — is kept once per distinct domain
 * (DomainTable) and by a two-byte id per key: a list has few domains, and they
 * are most of a key's length. Only the local part goes into the chunks, and the
 * slot's hash is the local part's mixed with the domain id. A key whose domain
 * gets no id (past MAX_DOMAINS, or no `@`) is kept and hashed whole, under id 0.
 * Measured at 1M rows (`npm run bench core`, runs alternating with the code
 * before, same session): peak RSS 185–224 MB → 169–190 MB; CPU time within
 * the machine's noise, medians of paired runs −2% to +4% (alone, a new key
 * costs about 40 ns more, a repeated one 30 ns less). Keeping the joined
 * chunks as bytes in Buffers, on top of this, saved nothing (179 MB) and cost
 * 4% CPU; so did 4× larger chunks (RSS 184–195 MB).
 *
 * `locate(key)` comes first: it finds the key's domain and hash, and the
 * `matches` and `add` that follow are given the same key.
 */
class KeyArena {
  private readonly chunks: string[] = [];
  /** the parts of the keys of the chunk being filled */
  private recent: string[] = [];
  private recentLength = 0;
  /** by ticket: where its part ends in its chunk */
  private ends = new Uint32Array(1 << 16);
  /** by ticket: its domain's id, or 0 when the key is kept whole */
  private domainIds = new Uint16Array(1 << 16);
  private readonly domains: DomainTable;
  /** of the key located last: its domain's id and the length of the part kept in the chunks */
  private domain = 0;
  private partLength = 0;

  /** `hash`, injected by tests, replaces the slot hash (and the domains'). */
  constructor(private readonly hash?: KeyHash) {
    this.domains = new DomainTable(hash);
  }

  /** Takes `key` as the one to match or add; returns the hash that chooses its slot. */
  locate(key: string, add: boolean): number {
    const id = this.domains.idOf(key, add);
    this.domain = id;
    this.partLength = id === 0 ? key.length : key.length - this.domains.length - 1;
    return this.hash ? this.hash(key) >>> 0 : hashRange(key, 0, this.partLength, id);
  }

  /** Adds the located `key` as `ticket`'s, which is the number of keys added so far. */
  add(ticket: number, key: string): void {
    if (ticket >= this.ends.length) {
      const ends = new Uint32Array(this.ends.length * 2);
      ends.set(this.ends);
      this.ends = ends;
      const ids = new Uint16Array(this.ends.length);
      ids.set(this.domainIds);
      this.domainIds = ids;
    }
    this.domainIds[ticket] = this.domain;
    this.recent.push(this.domain === 0 ? key : key.slice(0, this.partLength));
    this.recentLength += this.partLength;
    this.ends[ticket] = this.recentLength;
    if (this.recent.length === CHUNK) {
      this.chunks.push(this.recent.join(''));
      this.recent = [];
      this.recentLength = 0;
    }
  }

  /** Whether `ticket`'s key is `key`, the key located last. */
  matches(ticket: number, key: string): boolean {
    // The key's domain has an id exactly when it was interned: then the ids decide the domain.
    if (this.domainIds[ticket] !== this.domain) return false;
    const n = this.partLength;
    const c = ticket >>> CHUNK_BITS;
    const i = ticket & (CHUNK - 1);
    const start = i === 0 ? 0 : this.ends[ticket - 1]!;
    if (this.ends[ticket]! - start !== n) return false;
    // the chunk being filled is not joined yet: its parts are apart
    const filling = c === this.chunks.length;
    const chunk = filling ? this.recent[i]! : this.chunks[c]!;
    const from = filling ? 0 : start;
    for (let j = 0; j < n; j++) if (chunk.charCodeAt(from + j) !== key.charCodeAt(j)) return false;
    return true;
  }
}

/** The distinct domains, each an id from 1, looked up in place in the key (no string sliced per row). */
class DomainTable {
  private readonly names: string[] = [];
  /** open addressing: slots of [hash, id], id 0 when empty */
  private readonly slots = new Uint32Array(DOMAIN_SLOTS * 2);
  /** the length of the domain `idOf` found last (without its `@`), or -1 when the key has no `@` */
  length = -1;

  constructor(private readonly hash?: KeyHash) {}

  /**
   * The id of the domain of `key`, the part after its last `@`; 0 if it has
   * none — the domain is added first when `add` and there is room.
   */
  idOf(key: string, add: boolean): number {
    // Hashed from the end while looking for the `@`: one pass, no lastIndexOf
    // (with the slots below, 1M new keys cost 0.33 s of CPU rather than 0.37 s)
    let h = 0x811c9dc5 ^ SEED;
    let at = key.length - 1;
    for (let c; at >= 0 && (c = key.charCodeAt(at)) !== 64; at--) h = Math.imul(h ^ c, 0x01000193);
    if (at < 0) return ((this.length = -1), 0);
    const n = (this.length = key.length - at - 1);
    h = this.hash ? this.hash(key.slice(at + 1)) >>> 0 : mix(h ^ n);
    const t = this.slots;
    for (let i = h & (DOMAIN_SLOTS - 1); ; i = (i + 1) & (DOMAIN_SLOTS - 1)) {
      const id = t[i * 2 + 1]!;
      if (id === 0) {
        if (!add || this.names.length === MAX_DOMAINS) return 0;
        // A fresh copy: a slice could keep the whole input chunk it came from alive.
        this.names.push(JSON.parse(JSON.stringify(key.slice(at + 1))) as string);
        t[i * 2] = h;
        return (t[i * 2 + 1] = this.names.length);
      }
      if (t[i * 2] === h && this.names[id - 1]!.length === n && key.endsWith(this.names[id - 1]!)) return id;
    }
  }
}

/** Past this many distinct domains, keys are kept whole (ids are two bytes). */
const MAX_DOMAINS = 0xffff;
/** at most half full */
const DOMAIN_SLOTS = 1 << 17;
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
 * A 32-bit hash of the UTF-16 code units of `s` from `from` to `to` and of
 * `extra`, taken two at a time (it runs once per input row): FNV-1a-style,
 * finished with murmur3's avalanche.
 */
function hashRange(s: string, from: number, to: number, extra: number): number {
  let a = 0x811c9dc5 ^ SEED ^ (to - from) ^ (extra << 16);
  const n = to - 1;
  let i = from;
  for (; i < n; i += 2) a = Math.imul(a ^ (s.charCodeAt(i) | (s.charCodeAt(i + 1) << 16)), 0x01000193);
  if (i === n) a = Math.imul(a ^ s.charCodeAt(i), 0x01000193);
  return mix(a);
}

/** murmur3's avalanche */
function mix(a: number): number {
  a ^= a >>> 16;
  a = Math.imul(a, 0x85ebca6b);
  a ^= a >>> 13;
  a = Math.imul(a, 0xc2b2ae35);
  a ^= a >>> 16;
  return a >>> 0;
}
