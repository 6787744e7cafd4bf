import { domainOf } from '../dedupe/address-key.js';
import type { Verdict } from '../verdict.js';

/** The verdict of a row the local precheck rejected; no engine was asked. */
export function precheckVerdict(email: string): Verdict {
  return {
    email,
    isValid: false,
    status: 'invalid',
    confidence: 1,
    provider: 'precheck',
    details: { syntax: false, domain: email.includes('@') ? domainOf(email) || undefined : undefined },
  };
}
