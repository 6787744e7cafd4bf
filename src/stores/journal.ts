import { addressKey } from '../codec/address-key.js';
import { VerdictMemo, type KeyHash } from '../dedupe/verdict-memo.js';
import type { KnownVerdicts } from './known-verdicts.js';
import type { JobBinding } from './binding.js';
import { suffices, TailPool, type Evidence } from '../codec/verdict-encoding.js';
import { keptBy } from '../reason.js';
import { lockFile } from './lock.js';
import { UnusedRecords, type Unused } from './unused.js';
import { appending, checkRegularFile, openVerdictFile } from './verdict-file.js';
import { systemClock, type Clock } from '../time/clock.js';

export interface Journal extends KnownVerdicts {
  readonly path: string;
  /**
   * the verdicts found in the file, indexed the way the run deduplicates: the
   * run's Dedupe starts from them (`new Dedupe({ resumed })`), so a resumed job
   * holds each address once; undefined when the file held none
   */
  readonly memo?: VerdictMemo;
  /** verdicts found in the file when it was opened */
  readonly loaded: number;
  /** damaged lines ignored and bytes of a torn tail cut off when opening */
  readonly badLines: number;
  readonly repairedBytes: number;
  /** records read and not reused (damaged, of the first format, resting on too little) */
  readonly unused: Unused;
  /** the file held a job begun longer ago than the TTL, and was begun afresh: when that job began (epoch ms) */
  readonly restarted?: { began: number };
}

export interface JournalAge {
  /** --cache-ttl: a journal begun longer ago holds verdicts too old to reuse */
  ttlMs: number;
  /** what the journal's age is read on */
  clock?: Clock;
  /** a dry run: an old journal is not reused, and not begun afresh either */
  readOnly?: boolean;
}

/**
 * `--journal FILE`: a crash-safe record of the verdicts this job has paid for.
 * Opening it loads what an earlier, interrupted run recorded; `record` appends
 * each finished batch and resolves once it is written (see DurableAppender for
 * when it reaches the disk).
 *
 * What was in the file at open time is indexed, in the pipeline's compact memo
 * (the keys in an arena and a shared verdict shape per address, no object per
 * address), created only when the file holds verdicts. The run's Dedupe then
 * starts from that memo (`memo`, not part of KnownVerdicts: only the pipeline's Dedupe uses it) instead of keeping a second one: a resumed
 * million-row job holds each address once. New verdicts are not indexed here:
 * the pipeline already sends each address once per run. `hash` is for tests
 * that make keys collide.
 *
 * A journal records one job: it resumes that job without paying twice. Its
 * verdicts are as old as the job, so one begun longer ago than `age.ttlMs`
 * (--cache-ttl, the age past which a cached verdict is asked again) is begun
 * afresh: a journal given every night (the same path for each night's file)
 * must not keep serving a verdict past the TTL the cache honours. Reuse across
 * jobs is the cache's work, verdict by verdict.
 */
export async function openJournal(path: string, binding: JobBinding, evidence: Evidence, hash?: KeyHash, age?: JournalAge): Promise<Journal> {
  let index: VerdictMemo | undefined;
  const tails = new TailPool(false);
  const unused = new UnusedRecords();
  await checkRegularFile(path, 'journal');
  const unlock = await lockFile(path, '--journal');
  let opened;
  try {
    const now = (age?.clock ?? systemClock).now();
    const expiry = { now, notBefore: age ? now - age.ttlMs : -Infinity, ...(age?.readOnly ? { readOnly: true } : {}) };
    opened = await openVerdictFile(
      path,
      'journal',
      binding,
      (line) => {
        const read = tails.read(line);
        if (read.kind === 'damaged') {
          unused.damaged++;
          return false;
        }
        if (read.kind === 'older') {
          unused.olderFor(addressKey(read.email));
          return true;
        }
        const { email, tail } = read;
        const key = addressKey(email);
        if (!suffices(tails.evidence(tail), evidence)) {
          unused.weakerFor(key);
          return true;
        }
        const verdict = tails.verdict(email, tail);
        // what the journal keeps (keptBy) is all it ever wrote; a line that is not, it does not trust
        if (!keptBy('journal', verdict)) return true;
        index ??= new VerdictMemo(hash);
        index.fulfil(index.claim(key).ticket, key, verdict, true);
        return true;
      },
      false,
      expiry,
    );
  } catch (err) {
    await unlock();
    throw err;
  }
  const { appender } = opened;
  return {
    path,
    ...(index ? { memo: index } : {}),
    loaded: index?.size ?? 0,
    badLines: opened.badLines,
    repairedBytes: opened.repairedBytes,
    unused: unused.result((key) => index !== undefined && index.find(key) >= 0),
    ...(opened.restarted ? { restarted: opened.restarted } : {}),
    get(email) {
      if (index === undefined) return undefined; // a first run: nothing to look up
      const key = addressKey(email);
      const at = index.find(key);
      return at < 0 ? undefined : { verdict: index.verdictAt(at, key, email), source: 'journal' };
    },
    ...appending('journal', appender, evidence, unlock),
  };
}
