import { dirname } from 'node:path';
import type { KnownVerdicts } from './known-verdicts.js';
import type { JobBinding } from './binding.js';
import { addressKey } from '../codec/address-key.js';
import { storedLine, suffices, TailPool, type Evidence } from '../codec/verdict-encoding.js';
import { keptBy } from '../reason.js';
import { lockFile } from './lock.js';
import { UnusedRecords, type Unused } from './unused.js';
import { registerUser, type Registration } from './users.js';
import { appending, headerLine, openVerdictFile } from './verdict-file.js';
import { replacement } from '../fs/replace.js';
import { sweep } from '../fs/temp.js';
import { systemClock, type Clock } from '../time/clock.js';

export interface CacheOptions {
  ttlMs: number;
  binding: JobBinding;
  /** what this run's verdicts rest on: a record resting on less is asked again */
  evidence: Evidence;
  /** what records are dated and aged by, and the lock's wait timed on (a fixed one in tests) */
  clock?: Clock;
  /** rewrite the file on open when at least this many lines are stale and they outnumber the fresh ones */
  compactMinStale?: number;
}

export interface Cache extends KnownVerdicts {
  readonly path: string;
  /** verdicts young enough to be reused */
  readonly fresh: number;
  /** true when opening rewrote the file without its stale lines */
  readonly compacted: boolean;
  /** records read and not reused (damaged, of the first format, resting on too little) */
  readonly unused: Unused;
  /** verdicts not stored because the store went away mid-run (Redis); absent for a file, whose failed write ends the run */
  readonly unstored?: number;
}

/** A cache's newest record of an address: when, its spelling, its tail, and whether this run reuses it. */
interface Entry {
  ts: number;
  email: string;
  tail: string;
  reuse: boolean;
}

/**
 * `--cache FILE --cache-ttl 30d`: verdicts kept across runs and input files, for
 * cron jobs that must not pay twice for an address seen last week. The same
 * NDJSON format as the journal with each line prefixed by the time the verdict
 * was obtained (epoch seconds): `[1718000000,"ann@example.com","v11100-a",...]`.
 *
 * The file only grows by appending; when most of it has gone stale (expired or
 * superseded by a newer verdict for the same address) opening rewrites it with
 * the fresh lines only, atomically (temporary file + rename). Runs may share
 * one cache at the same moment (overlapping cron jobs): a run that is not alone
 * with it neither rewrites it nor cuts off a torn tail (see registerUser).
 *
 * Opening — registering, reading, and the rewrite if any — happens under
 * `FILE.lock`, which a run holds only that long (another run opening the cache
 * waits for it, up to OPEN_WAIT_MS). So a run either registered before this one
 * looked (and this one does not rewrite under it), or opens the file after the
 * rewrite: no run ever appends to a file that was renamed away.
 */
export async function openCache(path: string, o: CacheOptions): Promise<Cache> {
  const clock = o.clock ?? systemClock;
  const now = (): number => clock.now();
  const minStale = o.compactMinStale ?? 1000;
  let index = new Map<string, Entry>();
  const tails = new TailPool(true);
  const unused = new UnusedRecords();
  let lines = 0;
  const load = (line: string): boolean => {
    const read = tails.read(line);
    // epoch seconds, no later than a day of clock skew from now: a time past that is damage too
    if (read.kind === 'damaged' || (read.kind === 'verdict' && read.prefix! > now() / 1000 + 86_400)) {
      unused.damaged++;
      return false;
    }
    lines++;
    if (read.kind === 'older') {
      unused.olderFor(addressKey(read.email));
      return true;
    }
    const { email, tail } = read;
    const ts = read.prefix!;
    if (now() - ts * 1000 >= o.ttlMs) return true; // expired: usable line, not reused
    const key = addressKey(email);
    // what this run reuses: enough evidence, and what a cache keeps (keptBy: never an unknown)
    const enough = suffices(tails.evidence(tail), o.evidence);
    if (!enough) unused.weakerFor(key);
    const reuse = enough && keptBy('cache', tails.verdict(email, tail));
    const had = index.get(key);
    // every fresh record is kept (a run of another depth may reuse what this one cannot): the newest
    if (!had || had.ts <= ts) index.set(key, { ts, email, tail, reuse });
    return true;
  };
  const unlock = await lockFile(path, '--cache', { waitMs: OPEN_WAIT_MS, clock });
  let users: Registration | undefined;
  let opened;
  let compacted = false;
  try {
    // a rewrite killed half-way (kill -9, a crash) left its temp file, as large as the cache: gone with its owner
    await sweep(dirname(path));
    users = await registerUser(path, '--cache');
    const shared = users.others > 0;
    opened = await openVerdictFile(path, 'cache', o.binding, load, shared);
    const stale = lines - index.size;
    // rewritten only by a run alone with it: another's appends would go to the old file
    if (!shared && stale >= minStale && stale > index.size) {
      await opened.appender.close();
      await rewrite(path, headerLine('cache', o.binding), index);
      // `unused` stays: what the rewrite left out was read, and is asked again all the same
      index = new Map();
      lines = 0;
      opened = await openVerdictFile(path, 'cache', o.binding, load);
      compacted = true;
    }
  } catch (err) {
    await users?.release();
    throw err;
  } finally {
    await unlock();
  }
  const { appender } = opened;
  const registration = users;
  let fresh = 0;
  for (const e of index.values()) if (e.reuse) fresh++;
  return {
    path,
    fresh,
    compacted,
    unused: unused.result((key) => index.get(key)?.reuse === true),
    get(email) {
      if (fresh === 0) return undefined;
      const hit = index.get(addressKey(email));
      if (!hit?.reuse) return undefined;
      return { verdict: tails.verdict(email, hit.tail), source: 'cache' };
    },
    ...appending('cache', appender, o.evidence, registration.release, () => Math.floor(now() / 1000)),
  };
}

/** How long opening waits for another run that is opening (perhaps rewriting) the same cache. */
const OPEN_WAIT_MS = 60_000;

/** Replaces `path` with the header and the lines kept, whole (fs/replace.ts). */
async function rewrite(path: string, header: string, entries: Map<string, Entry>): Promise<void> {
  // the mode of the file it replaces: a cache shared with a group stays shared
  const r = await replacement(path);
  try {
    let chunk = header;
    for (const e of entries.values()) {
      chunk += storedLine(e.email, e.tail, e.ts) + '\n';
      if (chunk.length > 1 << 20) {
        await r.handle.appendFile(chunk);
        chunk = '';
      }
    }
    await r.handle.appendFile(chunk);
    await r.put();
  } catch (err) {
    await r.discard();
    throw err;
  }
}
