/**
 * Records a store read but does not reuse, and why: their addresses are asked
 * again. The CLI says so once per store (run-validate.ts).
 */
export interface Unused {
  /** lines failing their checksum or their format: damage, never read as a verdict */
  damaged: number;
  /** addresses with a record of the first format (no checksum, no evidence) and no newer one */
  older: number;
  /** addresses whose record rests on less than this run asks for (--no-dns, no --smtp) and that have no record that suffices */
  weaker: number;
}

/** Counts a store's unused records while it is read; an address answered by another record does not count. */
export class UnusedRecords {
  damaged = 0;
  private readonly older = new Set<string>();
  private readonly weaker = new Set<string>();

  /** a record of the first format, for the address of key `key` */
  olderFor(key: string): void {
    this.older.add(key);
  }

  /** a record resting on too little, for the address of key `key` */
  weakerFor(key: string): void {
    this.weaker.add(key);
  }

  /** The counts, once the store is read: `answered(key)` tells whether a usable record holds the address. */
  result(answered: (key: string) => boolean): Unused {
    const count = (keys: Set<string>): number => {
      let n = 0;
      for (const key of keys) if (!answered(key)) n++;
      return n;
    };
    return { damaged: this.damaged, older: count(this.older), weaker: count(this.weaker) };
  }
}
