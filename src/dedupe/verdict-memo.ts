import type { Verdict } from '../verdict.js';
import { VerdictEncoder } from '../codec/verdict-encoding.js';

/**
 * What `claim()` found for an address, and its ticket: 'new' (first sight: it
 * is now pending, and the caller must fulfil it), 'pending' (sent, not answered
 * yet), 'done' (answered: `verdictAt()` gives the verdict) or 'stored' (answered
 * by a store — the journal — before the run, and claimed for the first time now).
 */
export type Claimed = { kind: 'new' | 'pending' | 'done' | 'stored'; ticket: number };

/** a table slot no address holds; otherwise a slot holds its ticket + 1 and bits of its hash */
const EMPTY = 0;
/** an answer not given yet; otherwise shape + 1, or WHOLE */
const PENDING = 0;
/** the verdict is kept whole in the side map */
const WHOLE = 0x7fff;
const MAX_SHAPES = WHOLE - 1;
/** an answer's bit set while a verdict filed from a store has not been claimed ('stored') */
const STORED = 0x8000;

/** A 32-bit hash of a key: it chooses the slot, never decides equality. */
export type KeyHash = (key: string) => number;

/**
 * Every distinct address of the run, pending or answered, so that each is sent
 * once and a duplicate row later in the input gets its verdict without a second
 * request. The journal keeps its index in one too.
 *
 * It must hold a million addresses in little memory (a million-row job must not
 * grow by an object per row), so it keeps no string or object per address: the keys as bytes, side
 * by side (see KeyArena), and the index of a shared verdict "shape" in two
 * bytes: a verdict without its address, known by its tail — the same encoding
 * the journal and the cache write after the address (see VerdictEncoder.sharedTail). Most
 * verdicts of a run share a handful of shapes; verdicts that cannot share one
 * (a suggestion, an unusual domain) are kept whole in a side map.
 *
 * An address is looked up once, when its row is read (`claim`), and gets a
 * ticket: the number of addresses claimed before it. The open-addressing table
 * maps a hash to tickets; a ticket is taken as the address's only when its key,
 * kept in the arena, is the same — a hash that collides (by chance or by a list
 * crafted to) costs a probe, never a verdict. The answer is filed under the
 * ticket (`fulfil`) in a second, dense array.
 *
 * A slot is four bytes: the ticket + 1 in the low bits (a table at most half
 * full never needs more than log2(capacity) of them) and the rest of the hash
 * above, which rules out nearly every other key without reading its bytes.
 * Growing rehashes the keys from the arena.
 */
export class VerdictMemo {
  private capacity = 1 << 21;
  private table = new Uint32Array(this.capacity);
  /** by ticket: PENDING, WHOLE or shape + 1, and the STORED bit */
  private answers = new Uint16Array(this.capacity / 2);
  private readonly keys: KeyArena;
  private count = 0;
  private readonly shapes: Verdict[] = [];
  private readonly shapeIds = new Map<string, number>();
  private readonly whole = new Map<number, Verdict>();
  private readonly encoder = new VerdictEncoder();

  /** `hash` is injectable so that a test can make every key collide. */
  constructor(hash?: KeyHash) {
    this.keys = new KeyArena(hash);
  }

  get size(): number {
    return this.count;
  }

  /** the keys `expect` was told of, their hashes, and the next one to look for */
  private ahead: readonly (string | undefined)[] = [];
  private aheadHashes = new Uint32Array(0);
  private aheadAt = 0;
  /**
   * the slots `expect` read, kept so that the reads are not optimised away
   * (public only so that the linter does not call it unused: nothing reads it)
   */
  warmed = 0;

  /**
   * The keys the next claims will ask for, in their order (undefined where
   * there is none). Their hashes are taken now and their slots read in one
   * loop: the reads do not depend on each other, so the processor overlaps
   * their cache misses, where a claim that reads its own slot waits for it
   * alone — a miss into the 8 MB table is most of a claim's cost (1M
   * distinct keys: 0.47-0.52 s claimed one by one against 0.31-0.35 s, and
   * 0.27-0.30 s for the same claims with the table in cache). A claim uses
   * the hash taken for its key; a key passed over is no harm, nor is one
   * never told of: its hash is taken when it is claimed.
   */
  expect(keys: readonly (string | undefined)[]): void {
    const n = keys.length;
    if (this.aheadHashes.length < n) this.aheadHashes = new Uint32Array(n);
    const hashes = this.aheadHashes;
    for (let i = 0; i < n; i++) {
      const key = keys[i];
      if (key !== undefined) hashes[i] = this.keys.hashOf(key);
    }
    const t = this.table;
    const mask = this.capacity - 1;
    let read = 0;
    for (let i = 0; i < n; i++) if (keys[i] !== undefined) read |= t[hashes[i]! & mask]!;
    this.warmed = read;
    this.ahead = keys;
    this.aheadAt = 0;
  }

  /** The hash `expect` took of `key`, or -1; the keys before it are passed over. */
  private aheadOf(key: string): number {
    const ahead = this.ahead;
    while (this.aheadAt < ahead.length) {
      const i = this.aheadAt++;
      if (ahead[i] === key) return this.aheadHashes[i]!;
    }
    return -1;
  }

  /** Finds `key`, marking it pending if it was not there. */
  claim(key: string): Claimed {
    if ((this.count + 1) * 2 > this.capacity) this.grow();
    const h = this.aheadOf(key);
    const ticket = this.lookUp(h < 0 ? this.keys.locate(key) : this.keys.place(key, h));
    if (ticket < 0) {
      this.keys.add(this.count);
      this.table[~ticket] = this.slotOf(this.keys.located, this.count);
      return { kind: 'new', ticket: this.count++ };
    }
    const answer = this.answers[ticket]!;
    if (answer === PENDING) return { kind: 'pending', ticket };
    if ((answer & STORED) === 0) return { kind: 'done', ticket };
    this.answers[ticket] = answer & ~STORED;
    return { kind: 'stored', ticket };
  }

  /** The ticket of an answered address (for `verdictAt`), or -1; unlike `claim`, adds nothing. */
  find(key: string): number {
    const ticket = this.lookUp(this.keys.locate(key));
    return ticket < 0 || this.answers[ticket] === PENDING ? -1 : ticket;
  }

  /** The ticket of the key located last, whose hash is `h` (see KeyArena.locate), or ~slot: the empty slot where it would go. */
  private lookUp(h: number): number {
    const t = this.table;
    const mask = this.capacity - 1;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const slot = t[i]!;
      if (slot === EMPTY) return ~i;
      if (((slot ^ h) & ~mask) === 0 && this.keys.matches((slot & mask) - 1)) return (slot & mask) - 1;
    }
  }

  private slotOf(hash: number, ticket: number): number {
    return ((hash & ~(this.capacity - 1)) | (ticket + 1)) >>> 0;
  }

  /**
   * Files the verdict of a claimed address under its ticket; `key` is the
   * address claimed. `stored`: the verdict comes from a store loaded before the
   * run, and the run's first claim of it says 'stored'.
   */
  fulfil(ticket: number, key: string, verdict: Verdict, stored = false): void {
    const shape = this.shapeOf(verdict, key);
    if (shape < 0) this.whole.set(ticket, verdict);
    this.answers[ticket] = (shape < 0 ? WHOLE : shape + 1) | (stored ? STORED : 0);
  }

  /** The verdict of an answered address, re-addressed to `email` (the row's own spelling). */
  verdictAt(ticket: number, key: string, email: string): Verdict {
    const id = this.answers[ticket]! & ~STORED;
    if (id === WHOLE) {
      const whole = this.whole.get(ticket)!;
      return whole.email === email ? whole : { ...whole, email };
    }
    const shape = this.shapes[id - 1]!;
    // the shape was shared because its domain was exactly the key's (see shapeOf)
    const details = shape.details.domain === undefined ? shape.details : { ...shape.details, domain: key.slice(key.lastIndexOf('@') + 1) };
    return { ...shape, email, details };
  }

  /**
   * The index of the shape of `v` filed under `key`, added if new; -1 when it
   * has none to share (see VerdictEncoder.sharedTail) or the shapes are all taken. A shape is
   * known by its tail, the journal's encoding of a verdict without its address.
   */
  private shapeOf(v: Verdict, key: string): number {
    // a confidence the tail cannot tell apart (NaN and Infinity are written null)
    if (v.confidence !== undefined && !Number.isFinite(v.confidence)) return -1;
    const tail = this.encoder.sharedTail(v, key);
    if (tail === undefined) return -1;
    const sig = v.error ? tail + JSON.stringify([v.error.code, v.error.message]) : tail;
    let id = this.shapeIds.get(sig);
    if (id === undefined) {
      // A server whose confidences are never alike: past this many shapes, verdicts are kept whole.
      if (this.shapes.length >= MAX_SHAPES) return -1;
      id = this.shapes.length;
      const d = v.details;
      this.shapes.push({ ...v, email: '', details: d.domain === undefined ? { ...d } : { ...d, domain: '' } });
      this.shapeIds.set(sig, id);
    }
    return id;
  }

  private grow(): void {
    this.capacity *= 2;
    const t = (this.table = new Uint32Array(this.capacity));
    const mask = this.capacity - 1;
    for (let ticket = 0; ticket < this.count; ticket++) {
      const h = this.keys.hashOfTicket(ticket);
      let i = h & mask;
      while (t[i] !== EMPTY) i = (i + 1) & mask;
      t[i] = this.slotOf(h, ticket);
    }
    const answers = new Uint16Array(this.capacity / 2);
    answers.set(this.answers);
    this.answers = answers;
  }
}

/**
 * The keys by ticket, as bytes in pages of a megabyte: no string per key (a
 * million strings cost about 60 MB more than their characters, and keep the
 * garbage collector busy). A UTF-16 code unit below 0xff is one byte, any other
 * is 0xff and its two bytes, so two keys are equal exactly when their bytes
 * are. Growing the table takes the hashes again from the bytes (hashEncoded).
 *
 * `locate(key)` writes the key's bytes after the last key added and takes
 * its hash; `matches` compares those bytes with a ticket's, and `add` keeps
 * them. Keys never straddle pages.
 *
 * Whole keys, not a local part plus an interned domain: at 1M rows
 * (`npm run bench core`, now `throughput`, runs alternating, same session, before the native copy) the throughput ratio was 0.68–0.72 against 0.61–0.66
 * for interned domains in joined strings — the
 * domain table cost a cache miss per row that the rest of the run keeps
 * evicting — for peak RSS 173–186 MB against 169–199 MB.
 */
class KeyArena {
  private readonly pages: Buffer[] = [Buffer.alloc(PAGE)];
  /** by page: its first ticket */
  private readonly firstTickets: number[] = [];
  /** where the next key goes in the last page */
  private used = 0;
  /** by ticket: where its bytes end in its page */
  private ends = new Uint32Array(1 << 16);
  /** of the key located last: its length in bytes, and its hash (for the slot `add` fills) */
  private length = 0;
  located = 0;

  constructor(private readonly hash?: KeyHash) {}

  /** Takes `key` as the one to match or add; returns the hash that chooses its slot. */
  locate(key: string): number {
    const n = key.length;
    const page = this.room(n);
    if (this.hash) {
      this.length = write(key, page, this.used) - this.used;
      return (this.located = this.hash(key) >>> 0);
    }
    // The bytes and hashUnits in one pass over the key's code units.
    let at = this.used;
    let h = 0x811c9dc5 ^ SEED;
    const last = n - 1;
    let i = 0;
    for (; i < last; i += 2) {
      const a = key.charCodeAt(i);
      const b = key.charCodeAt(i + 1);
      at = put(page, at, a);
      at = put(page, at, b);
      h = Math.imul(h ^ (a | (b << 16)), 0x01000193);
    }
    if (i === last) {
      const a = key.charCodeAt(i);
      at = put(page, at, a);
      h = Math.imul(h ^ a, 0x01000193);
    }
    this.length = at - this.used;
    return (this.located = mix(h ^ n));
  }

  /**
   * `locate` for a key whose hash is known already (see VerdictMemo.expect).
   * Its bytes are copied natively (see write): 1M claims of the bench's keys,
   * expect() included, 0.22-0.25 s of CPU against 0.25-0.30 s with a loop
   * over the code units (two rounds of five, alternating).
   */
  place(key: string, hash: number): number {
    const page = this.room(key.length);
    this.length = write(key, page, this.used) - this.used;
    return (this.located = hash);
  }

  /** The last page, or a new one when the next `n` code units might not fit in it. */
  private room(n: number): Buffer {
    let page = this.pages[this.pages.length - 1]!;
    if (this.used + n * 3 > page.length) {
      page = Buffer.alloc(Math.max(PAGE, n * 3));
      // a page no key went into is replaced, so that every page has a first ticket
      if (this.used === 0) this.pages[this.pages.length - 1] = page;
      else this.pages.push(page);
      this.used = 0;
    }
    return page;
  }

  /** Keeps the located key as `ticket`'s, which is the number of keys added so far. */
  add(ticket: number): void {
    if (ticket >= this.ends.length) {
      const ends = new Uint32Array(this.ends.length * 2);
      ends.set(this.ends);
      this.ends = ends;
    }
    if (this.firstTickets.length < this.pages.length) this.firstTickets.push(ticket);
    this.used += this.length;
    this.ends[ticket] = this.used;
  }

  /** Whether `ticket`'s key is the key located last. */
  matches(ticket: number): boolean {
    const p = this.pageOf(ticket);
    const start = this.startOf(ticket, p);
    const n = this.length;
    if (this.ends[ticket]! - start !== n) return false;
    const page = this.pages[p]!;
    const last = this.pages[this.pages.length - 1]!;
    const at = this.used;
    for (let j = 0; j < n; j++) if (page[start + j] !== last[at + j]) return false;
    return true;
  }

  /** The hash that chooses `key`'s slot. */
  hashOf(key: string): number {
    return this.hash ? this.hash(key) >>> 0 : hashUnits(key);
  }

  /** The hash of `ticket`'s key, taken from its bytes (growing the table needs it again). */
  hashOfTicket(ticket: number): number {
    const p = this.pageOf(ticket);
    const [page, from, to] = [this.pages[p]!, this.startOf(ticket, p), this.ends[ticket]!];
    return this.hash ? this.hashOf(decode(page, from, to)) : hashEncoded(page, from, to);
  }

  private startOf(ticket: number, page: number): number {
    return ticket === this.firstTickets[page] ? 0 : this.ends[ticket - 1]!;
  }

  private pageOf(ticket: number): number {
    const first = this.firstTickets;
    let lo = 0;
    let hi = first.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (first[mid]! <= ticket) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}

/** bytes per page of keys */
const PAGE = 1 << 20;

/** Seeded per run, so that a list cannot be crafted in advance to pile its addresses into one run of slots. */
const SEED = (Math.random() * 0x100000000) >>> 0;

/** Writes `key` at `at` as the arena's bytes (see KeyArena); returns where they end. */
function write(key: string, page: Buffer, at: number): number {
  // An ASCII key is the same bytes in UTF-8: Buffer#write copies it natively
  // (1M keys of ~38 characters: 90 ms against 150 ms for encode's loop).
  return page.write(key, at) === key.length ? at + key.length : encode(key, page, at);
}

/** One code unit as the arena's bytes (see KeyArena) at `at`; returns where they end. */
function put(page: Uint8Array, at: number, c: number): number {
  if (c < 0xff) {
    page[at] = c;
    return at + 1;
  }
  page[at] = 0xff;
  page[at + 1] = c >>> 8;
  page[at + 2] = c & 0xff;
  return at + 3;
}

function encode(key: string, page: Uint8Array, at: number): number {
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c < 0xff) page[at++] = c;
    else {
      page[at++] = 0xff;
      page[at++] = c >>> 8;
      page[at++] = c & 0xff;
    }
  }
  return at;
}

/** The key whose arena bytes are `bytes[from..to)` (for an injected hash, in tests). */
function decode(bytes: Uint8Array, from: number, to: number): string {
  let key = '';
  for (let i = from; i < to; i++) key += String.fromCharCode(bytes[i] === 0xff ? (bytes[++i]! << 8) | bytes[++i]! : bytes[i]!);
  return key;
}

/**
 * A 32-bit hash of the UTF-16 code units of `key`, taken two at a time (it
 * runs once per input row): FNV-1a-style, seeded per run, finished with
 * murmur3's avalanche.
 */
function hashUnits(key: string): number {
  let h = 0x811c9dc5 ^ SEED;
  const last = key.length - 1;
  let i = 0;
  for (; i < last; i += 2) h = Math.imul(h ^ (key.charCodeAt(i) | (key.charCodeAt(i + 1) << 16)), 0x01000193);
  if (i === last) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return mix(h ^ key.length);
}

/** hashUnits of the key whose arena bytes are `bytes[from..to)`, without building it. */
function hashEncoded(bytes: Uint8Array, from: number, to: number): number {
  let h = 0x811c9dc5 ^ SEED;
  let units = 0;
  let pending = -1;
  for (let i = from; i < to; i++) {
    const unit = bytes[i] === 0xff ? (bytes[++i]! << 8) | bytes[++i]! : bytes[i]!;
    units++;
    if (pending < 0) pending = unit;
    else {
      h = Math.imul(h ^ (pending | (unit << 16)), 0x01000193);
      pending = -1;
    }
  }
  if (pending >= 0) h = Math.imul(h ^ pending, 0x01000193);
  return mix(h ^ units);
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
