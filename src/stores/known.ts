import type { KnownVerdicts } from './known-verdicts.js';

/**
 * One KnownVerdicts over several stores, asked in order (journal, then cache):
 * the journal is this very job's record, the cache a reusable older answer. Every
 * finished batch is recorded in all of them. Undefined when there are none.
 */
export function combineKnown(...stores: Array<KnownVerdicts | undefined>): KnownVerdicts | undefined {
  const list = stores.filter((s): s is KnownVerdicts => s !== undefined);
  if (list.length <= 1) return list[0];
  return {
    get(email) {
      for (const s of list) {
        const hit = s.get(email);
        if (hit) return hit;
      }
      return undefined;
    },
    async record(verdicts) {
      await Promise.all(list.map((s) => s.record(verdicts)));
    },
    async close() {
      const results = await Promise.allSettled(list.map((s) => s.close()));
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    },
  };
}
