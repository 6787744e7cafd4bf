import type { Status, Verdict } from '../../src/verdict.js';

/** A verdict as the report sees one: a status and the details that choose its reason. */
export const verdict = (email: string, status: Status, details: Verdict['details'] = {}): Verdict => ({
  email,
  isValid: status === 'unknown' ? undefined : status !== 'invalid',
  status,
  confidence: undefined,
  provider: 'test',
  details,
});
