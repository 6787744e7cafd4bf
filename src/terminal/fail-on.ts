import { UsageError } from '../errors.js';
import type { Summary } from '../summary.js';
import { count, percent, plural } from '../format.js';

/**
 * `--fail-on` grammar (also in docs/output.md):
 *
 *   rules  = rule *( "," rule )
 *   rule   = metric op number [ "%" ]
 *   metric = valid | invalid | risky | unknown | errors | duplicates | prechecked | empty
 *   op     = ">" | ">=" | "<" | "<="
 *
 * A number with "%" is a share of the rows that hold an address (all input
 * rows but those whose address cell is empty: a shop's customers without an
 * email are not bad addresses); `empty` is a share of all rows. Without "%",
 * a row count; `invalid` never counts the empty rows, which are `empty`'s.
 * Blanks around the parts are allowed. The run fails when any rule holds.
 * `<` lets a cron job demand a floor, e.g. `valid<80%`.
 */
export const FAIL_ON_METRICS = ['valid', 'invalid', 'risky', 'unknown', 'errors', 'duplicates', 'prechecked', 'empty'] as const;
export type FailOnMetric = (typeof FAIL_ON_METRICS)[number];
type Op = '>' | '>=' | '<' | '<=';

export interface FailOnRule {
  metric: FailOnMetric;
  op: Op;
  value: number;
  percent: boolean;
  /** the rule as the user wrote it, trimmed, for messages */
  text: string;
}

const RULE = /^([a-z]+)\s*(>=|<=|>|<)\s*(\d+(?:\.\d+)?)\s*(%?)$/;

export function parseFailOn(spec: string): FailOnRule[] {
  const parts = spec.split(',').map((p) => p.trim());
  if (parts.every((p) => p === '')) throw new UsageError('--fail-on needs a rule such as invalid>5%');
  return parts.map(parseRule);
}

function parseRule(text: string): FailOnRule {
  const m = RULE.exec(text.toLowerCase());
  if (!m) {
    // A bare measure is what is left when the shell took an unquoted ">5%" as a redirection.
    const hint = /^[a-z]+$/i.test(text) ? ` (quote the rule: --fail-on '${text}>5%'; an unquoted > is a shell redirection)` : '';
    throw new UsageError(`--fail-on: cannot read rule "${text}"; expected e.g. invalid>5% or unknown>100${hint}`);
  }
  const [, metric, op, num, pct] = m as unknown as [string, string, Op, string, string];
  if (!(FAIL_ON_METRICS as readonly string[]).includes(metric)) {
    throw new UsageError(`--fail-on: unknown measure "${metric}" in "${text}"; use one of ${FAIL_ON_METRICS.join(', ')}`);
  }
  const value = Number(num);
  if (pct && value > 100) throw new UsageError(`--fail-on: "${text}" is more than 100%`);
  return { metric: metric as FailOnMetric, op, value, percent: pct === '%', text };
}

export interface FailOnHit {
  rule: FailOnRule;
  /** e.g. "invalid>5% holds: invalid is 7.2% (72 of 1,000 rows)" */
  message: string;
}

/** The rules that hold for this summary, in the order given. */
export function evaluateFailOn(rules: readonly FailOnRule[], s: Summary): FailOnHit[] {
  const hits: FailOnHit[] = [];
  const empty = s.empty ?? 0;
  for (const rule of rules) {
    // an empty cell is invalid in the output, but no address to judge the list by
    const n = rule.metric === 'invalid' ? s.invalid - empty : s[rule.metric];
    const whole = rule.metric === 'empty' ? s.total : s.total - empty;
    const actual = rule.percent ? (whole === 0 ? 0 : (100 * n) / whole) : n;
    if (!compare(actual, rule.op, rule.value)) continue;
    const of = rule.metric === 'empty' || empty === 0 ? plural(whole, 'row', 'rows') : plural(whole, 'row with an address', 'rows with an address');
    const shown = rule.percent ? `${percent(n, whole)} (${count(n)} of ${of})` : `${count(n)}`;
    hits.push({ rule, message: `--fail-on ${rule.text} holds: ${rule.metric} is ${shown}` });
  }
  return hits;
}

function compare(a: number, op: Op, b: number): boolean {
  switch (op) {
    case '>':
      return a > b;
    case '>=':
      return a >= b;
    case '<':
      return a < b;
    case '<=':
      return a <= b;
  }
}
