/**
 * The identity of an address — for deduplication, the journal's index and the
 * cache alike: the local part as written (it is case-sensitive by RFC 5321) and
 * the domain lower-cased (it is not). Stores match the way the pipeline
 * dedupes, so that a resumed run skips exactly what the first one sent.
 */
export function addressKey(email: string): string {
  const at = email.lastIndexOf('@');
  if (at < 0) return email;
  // Most domains are written in lower case already: no new string then.
  for (let i = at + 1; i < email.length; i++) {
    const c = email.charCodeAt(i);
    if ((c >= 65 && c <= 90) || c > 127) return email.slice(0, at + 1) + email.slice(at + 1).toLowerCase();
  }
  return email;
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
