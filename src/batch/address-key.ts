/**
 * The identity of an address for deduplication: the local part as written (it is
 * case-sensitive by RFC 5321) and the domain lower-cased (it is not).
 */
export function addressKey(email: string): string {
  const at = email.lastIndexOf('@');
  const domain = email.slice(at + 1);
  const lower = domain.toLowerCase();
  return lower === domain ? email : email.slice(0, at + 1) + lower;
}

/** The domain part of an address as the verdict's `domain` usually reports it. */
export function domainOf(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}
