import { reasonOf } from '../reason.js';
import type { Verdict } from '../verdict.js';
import { resultObject } from '../write/verdict-columns.js';

const yesNo = (b: boolean | undefined) => (b === undefined ? '' : b ? 'yes' : 'no');

/**
 * `mailsift check`'s verdict on stdout. `--json`: one object, the API's Shape
 * A fields plus `reason` (and `error`), as `validate` writes a result (the same
 * `resultObject`). Otherwise one `key: value` line per field, aligned on a
 * terminal; an unknown value is empty.
 */
export function formatVerdict(v: Verdict, how: { json: boolean; tty: boolean }): string {
  if (how.json) return `${JSON.stringify(resultObject(v, reasonOf(v)), null, 2)}\n`;
  const d = v.details;
  const rows: [string, string][] = [
    ['email', v.email],
    ['status', v.status],
    ['reason', reasonOf(v)],
    ['confidence', v.confidence === undefined ? '' : v.confidence.toFixed(2)],
    ['syntax', yesNo(d.syntax)],
    ['domain', d.domain ?? ''],
    ['mx', yesNo(d.mx)],
    ['disposable', yesNo(d.disposable)],
    ['role', yesNo(d.role)],
    ['free', yesNo(d.free)],
    ['suggestion', d.suggestion ?? ''],
    ['smtp', yesNo(d.smtp)],
    ['catch-all', yesNo(d.catchAll)],
    ['provider', v.provider],
  ];
  if (v.error) rows.push(['error', `${v.error.code}: ${v.error.message}`]);
  const width = Math.max(...rows.map(([k]) => k.length)) + 2;
  const label = (k: string) => (how.tty ? `${k}:`.padEnd(width) : `${k}: `);
  return rows.map(([k, val]) => `${label(k)}${val}`.trimEnd()).join('\n') + '\n';
}
