import { isPlainAddress, parseAddress } from './syntax.js';

/**
 * The identity of an address — for deduplication, the journal's index and the
 * caches alike — made from the address as the syntax check (syntax.ts)
 * accepts it: the domain in its IDNA A-label form, lower case, and the local
 * part with its ASCII letters lower-cased. RFC 5321 lets a mail server tell
 * `Jane.Doe` from `jane.doe`; no provider a list cleaner meets does, so the
 * two are one mailbox: sent once, recorded once, the same verdict on every row.
 * Letters outside ASCII keep their case: servers that fold them are rarer, and
 * Unicode case rules map some to ASCII letters (KELVIN SIGN to `k`).
 *
 * An address the syntax check refuses is its own key, exactly as written: it
 * shares no key with a valid address, since every key made above passes that
 * check itself and so can never equal a string that failed it. So
 * `a@Kelvin.com` written with U+212A, which IDNA2008 refuses, is never the
 * verdict of `a@kelvin.com`. Stores match the way the pipeline dedupes, so that
 * a resumed run skips exactly what the first one sent.
 */
export function addressKey(email: string): string {
  if (isPlainAddress(email)) return email;
  const parsed = parseAddress(email);
  if (parsed === undefined) return email;
  const { local, domain } = parsed;
  const at = local.length;
  // Most addresses are written in lower case already: no new string then.
  for (let i = 0; i < at; i++) {
    const c = email.charCodeAt(i);
    if (c >= 65 && c <= 90) return lowerAscii(local) + '@' + domain;
  }
  return email.length === at + 1 + domain.length && email.endsWith(domain) ? email : local + '@' + domain;
}

function lowerAscii(s: string): string {
  return s.replace(/[A-Z]+/g, (upper) => upper.toLowerCase());
}

/** The domain part of an address as the verdict's `domain` usually reports it. */
export function domainOf(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}

/**
 * `domain` is exactly the part of `address` after its last `@` (compared
 * without slicing: this runs per verdict). An `@` inside `domain` would make
 * that `@` not the last one.
 */
export function isDomainOf(domain: string, address: string): boolean {
  return address.endsWith(domain) && address.charCodeAt(address.length - domain.length - 1) === 64 && !domain.includes('@');
}
