import { UsageError } from '../errors.js';
import type { KnownVerdicts } from './known-verdicts.js';
import { evidenceOf, jobBinding, type BindingOptions } from './binding.js';
import { openCache, type Cache } from './cache.js';
import { openJournal, type Journal } from './journal.js';
import { combineKnown } from './known.js';
import type { RedisTarget } from '../redis/url.js';
import { systemClock, type Clock } from '../time/clock.js';

/**
 * What `--cache` names, told apart once, when the flag is parsed: a file, or
 * a Redis server that machines share.
 */
export type CacheTarget = { kind: 'file'; path: string } | { kind: 'redis'; redis: RedisTarget };

export interface StoreOptions {
  journal?: string;
  cache?: CacheTarget;
  /** --cache-ttl, milliseconds (the CLI's parser reads the flag): the cache's verdicts, and a journal's job (see openJournal) */
  cacheTtlMs: number;
  /** a dry run: look, change nothing (an old journal is not begun afresh) */
  readOnly?: boolean;
  /** what records are dated and aged by (io.clock) */
  clock?: Clock;
  /** told once when a Redis cache stops answering mid-run (the run goes on without it) */
  onCacheLost?: (line: string) => void;
}

export interface Stores {
  /** journal first, then cache; undefined without either flag */
  known?: KnownVerdicts;
  journal?: Journal;
  cache?: Cache;
}

/**
 * Opens what `--journal` and `--cache` name, bound to this run's job. (That
 * neither is the input, an output or the other is checked before, with every
 * file of the run: see refuseCollisions.)
 */
export async function openStores(flags: StoreOptions, job: BindingOptions): Promise<Stores> {
  const ttlMs = flags.cacheTtlMs;
  if (flags.journal === '-' || (flags.cache?.kind === 'file' && flags.cache.path === '-')) throw new UsageError('--journal and --cache need a file, not -');

  const binding = jobBinding(job);
  const evidence = evidenceOf(job);
  const clock = flags.clock ?? systemClock;
  const age = { ttlMs, clock, ...(flags.readOnly ? { readOnly: true } : {}) };
  const journal = flags.journal ? await openJournal(flags.journal, binding, evidence, undefined, age) : undefined;
  let cache: Cache | undefined;
  try {
    cache = !flags.cache
      ? undefined
      : flags.cache.kind === 'redis'
        ? // loaded only when used: ioredis costs start-up time a file cache need not pay
          await (await import('./redis-verdict-cache.js')).openRedisCache(flags.cache.redis, { ttlMs, binding, evidence, clock, onLost: flags.onCacheLost })
        : await openCache(flags.cache.path, { ttlMs, binding, evidence, clock });
  } catch (err) {
    await journal?.close();
    throw err;
  }
  return { known: combineKnown(journal, cache), journal, cache };
}
