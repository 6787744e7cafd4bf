import { isReason, REASONS, statusesOf, type Reason } from '../reason.js';
import { STATUSES, type Status, type Verdict } from '../verdict.js';

/** A status or a reason: what `--only` and `--except` name. */
export type RowToken = Status | Reason;

/** Which rows are written (list cleaning); every row is counted in the summary either way. */
export interface RowFilter {
  /** --only: rows whose status or reason is one of these */
  only?: ReadonlySet<RowToken>;
  /** --except: not rows whose status or reason is one of these */
  except?: ReadonlySet<RowToken>;
  /** --unique: only the first row of each address */
  unique?: boolean;
}

/**
 * `valid,catch_all` → the set, or the one-line problem with the first token
 * that is neither a status nor a reason (naming both vocabularies).
 */
export function parseTokens(value: string): Set<RowToken> | string {
  const set = new Set<RowToken>();
  for (const raw of value.split(',')) {
    const t = raw.trim().toLowerCase();
    if (!(STATUSES as readonly string[]).includes(t) && !isReason(t)) {
      return `"${raw.trim()}" is neither a status (${STATUSES.join(', ')}) nor a reason (${REASONS.join(', ')})`;
    }
    set.add(t as RowToken);
  }
  return set;
}

/** Whether the filter's status and reason rules let `v`, whose reason is `reason`, through (--unique is the pipeline's). */
export function keeps(filter: RowFilter, v: Verdict, reason: Reason | ''): boolean {
  const { only, except } = filter;
  if (!only && !except) return true;
  const has = (set: ReadonlySet<RowToken>): boolean => set.has(v.status) || (reason !== '' && set.has(reason));
  if (only && !has(only)) return false;
  return !(except && has(except));
}

/** The statuses some row could pass the filter with: --split opens a file for each. */
export function statusesKept(filter: RowFilter): Status[] {
  const { only, except } = filter;
  return STATUSES.filter((s) => {
    if (except?.has(s)) return false;
    if (!only || only.has(s)) return true;
    return [...only].some((t) => isReason(t) && statusesOf(t).includes(s));
  });
}
