import type { Verdict } from '../verdict.js';

/** The verdict of a row the local precheck rejected; no engine was asked. */
export function precheckVerdict(email: string, reason: string): Verdict {
  const at = email.lastIndexOf('@');
  return {
    email,
    isValid: false,
    status: 'invalid',
    confidence: 1,
    provider: 'precheck',
    details: { syntax: false, domain: at >= 0 && reason !== 'empty' ? email.slice(at + 1).toLowerCase() || undefined : undefined },
  };
}
