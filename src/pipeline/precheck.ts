import { domainOf } from '../codec/address-key.js';
import type { Verdict } from '../verdict.js';

/**
 * The local precheck: rejects what is plainly not an address without spending an
 * API call. Deliberately conservative — it must never reject what the API would
 * accept — so it only looks for: an empty cell, no `@`, nothing before the
 * first `@` or after the last (an unquoted local part and a domain are never
 * empty, RFC 5321 §4.1.2: `@handle` is a social-media handle, not an address),
 * more than 254 characters, a control character, white space outside a quoted local part, or a lone UTF-16
 * surrogate (half a character: no UTF-8 form, so no request could carry it).
 * Returns the reason, or undefined when the address may go to the engine.
 */
export function precheck(email: string): string | undefined {
  if (email.length === 0) return 'empty';
  if (email.length > 254) return 'longer than 254 characters';
  if (!email.includes('@')) return 'no @';
  if (email.charCodeAt(0) === 0x40) return 'nothing before the @';
  if (email.charCodeAt(email.length - 1) === 0x40) return 'nothing after the @';
  // Fast path: plain printable ASCII without quotes (nearly every address).
  let i = 0;
  while (i < email.length) {
    const c = email.charCodeAt(i);
    if (c <= 0x22 || c >= 0x7f) break;
    i++;
  }
  if (i === email.length) return undefined;
  if (LONE_SURROGATE.test(email)) return 'lone UTF-16 surrogate';
  let quoted = false;
  for (let i = 0; i < email.length; i++) {
    const c = email.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return 'control character';
    if (c === 0x5c && quoted) {
      i++; // a quoted pair: the next character is literal
      continue;
    }
    if (c === 0x22) quoted = !quoted;
    else if (!quoted && isSpace(c)) return 'white space';
  }
  return undefined;
}

// with the u flag a surrogate matches only when it is not half of a pair
const LONE_SURROGATE = /\p{Cs}/u;

function isSpace(c: number): boolean {
  // ASCII space plus the Unicode spaces a copy-paste brings along (NBSP, thin space, ...)
  return (
    c === 0x20 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200b) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/**
 * The verdict of a row the local precheck rejected; no engine was asked. An
 * empty cell (email '') is `invalid` too, its reason `empty` (see reasonOf):
 * no syntax was checked, so its details say nothing.
 */
export function precheckVerdict(email: string): Verdict {
  return {
    email,
    isValid: false,
    status: 'invalid',
    confidence: 1,
    provider: 'precheck',
    details: email === '' ? {} : { syntax: false, domain: email.includes('@') ? domainOf(email) || undefined : undefined },
  };
}
