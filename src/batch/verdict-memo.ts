import type { Verdict } from '../verdict.js';
import { domainOf } from './address-key.js';

/**
 * The verdict of every distinct address answered so far in this run, so that a
 * duplicate row later in the input gets its verdict without a second request.
 *
 * It must hold a million addresses in little memory (PRODUCT.md §5: memory stays
 * flat), so it keeps no strings: a 64-bit hash of the address and the index of
 * a shared verdict "shape" (the verdict without its address). Most verdicts of a
 * run share a handful of shapes. The 2^21-slot table is allocated up front so
 * that the footprint does not grow until a run passes a million distinct
 * addresses (~24 MB). Two addresses with the same 64-bit hash (odds ~3e-8 at 1M
 * addresses) would share a verdict; verdicts that cannot share a shape (a
 * suggestion, an unusual domain) are kept whole in a side map.
 */
export class VerdictMemo {
  private capacity = 1 << 21;
  private hi = new Uint32Array(this.capacity);
  private lo = new Uint32Array(this.capacity);
  /** shape index + 1; 0 marks an empty slot */
  private value = new Uint32Array(this.capacity);
  private count = 0;
  private readonly shapes: Verdict[] = [];
  private readonly shapeIds = new Map<string, number>();
  private readonly whole = new Map<string, Verdict>();

  get size(): number {
    return this.count + this.whole.size;
  }

  set(key: string, verdict: Verdict): void {
    if (verdict.details.suggestion !== undefined ||
        (verdict.details.domain !== undefined && verdict.details.domain !== domainOf(key))) {
      this.whole.set(key, verdict);
      return;
    }
    this.insert(key, this.shapeOf(verdict) + 1);
  }

  /** the remembered verdict, re-addressed to `email` (the row's own spelling) */
  get(key: string, email: string): Verdict | undefined {
    const whole = this.whole.get(key);
    if (whole) return whole.email === email ? whole : { ...whole, email };
    const id = this.lookup(key);
    if (id === 0) return undefined;
    const shape = this.shapes[id - 1]!;
    const details = shape.details.domain === undefined ? shape.details : { ...shape.details, domain: domainOf(key) };
    return { ...shape, email, details };
  }

  private shapeOf(v: Verdict): number {
    const d = v.details;
    const sig = `${v.status}|${v.isValid}|${v.confidence}|${v.provider}|${d.syntax}|${d.domain !== undefined}|${d.mx}|` +
      `${d.disposable}|${d.role}|${d.free}|${v.error?.code}|${v.error?.message}`;
    let id = this.shapeIds.get(sig);
    if (id === undefined) {
      id = this.shapes.length;
      this.shapes.push({ ...v, email: '', details: d.domain === undefined ? { ...d } : { ...d, domain: '' } });
      this.shapeIds.set(sig, id);
    }
    return id;
  }

  private insert(key: string, value: number): void {
    if ((this.count + 1) * 2 > this.capacity) this.grow();
    const [h, l] = hash64(key);
    const mask = this.capacity - 1;
    for (let i = l & mask; ; i = (i + 1) & mask) {
      if (this.value[i] === 0) {
        this.hi[i] = h;
        this.lo[i] = l;
        this.value[i] = value;
        this.count++;
        return;
      }
      if (this.hi[i] === h && this.lo[i] === l) {
        this.value[i] = value;
        return;
      }
    }
  }

  private lookup(key: string): number {
    const [h, l] = hash64(key);
    const mask = this.capacity - 1;
    for (let i = l & mask; ; i = (i + 1) & mask) {
      const v = this.value[i]!;
      if (v === 0) return 0;
      if (this.hi[i] === h && this.lo[i] === l) return v;
    }
  }

  private grow(): void {
    const { hi, lo, value } = this;
    this.capacity *= 2;
    this.hi = new Uint32Array(this.capacity);
    this.lo = new Uint32Array(this.capacity);
    this.value = new Uint32Array(this.capacity);
    const mask = this.capacity - 1;
    for (let j = 0; j < value.length; j++) {
      if (value[j] === 0) continue;
      let i = lo[j]! & mask;
      while (this.value[i] !== 0) i = (i + 1) & mask;
      this.hi[i] = hi[j]!;
      this.lo[i] = lo[j]!;
      this.value[i] = value[j]!;
    }
  }
}

/** Two independent 32-bit hashes (FNV-1a and a murmur-style mix) of the UTF-16 code units. */
function hash64(s: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x9747b28c ^ s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 13;
  }
  a ^= a >>> 16;
  a = Math.imul(a, 0x85ebca6b);
  a ^= a >>> 13;
  b = Math.imul(b ^ (b >>> 15), 0xc2b2ae35);
  b ^= b >>> 16;
  return [b >>> 0, a >>> 0];
}
