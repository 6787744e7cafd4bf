/**
 * Mail services whose SMTP answers cannot be trusted, kept as data.
 *
 * `accepts-all`: the service's MX accepts every RCPT TO and bounces later, so
 * a 250 proves nothing and a catch-all probe says nothing either. Their
 * addresses are not dialled: `smtp` and `catch_all` stay empty.
 *
 * Sources:
 *   - Yahoo, AOL, Verizon/AT&T mail hosted by Yahoo (MX under yahoodns.net):
 *     reacherhq/check-if-email-exists, core/src/smtp/yahoo/ — Reacher verifies
 *     Yahoo addresses through the sign-up page because the MX "always returns
 *     valid"; AfterShip/email-verifier README ("Yahoo ... not support SMTP
 *     verification") says the same.
 *   - Mimecast and antispamcloud (SpamExperts) gateways: accept at RCPT time
 *     and filter afterwards; antispamcloud is listed in Reacher's
 *     core/src/rules.json (by_mx_suffix).
 */
export interface ProviderRule {
  /** matched against the domain, or a suffix of an MX host name */
  domain?: string;
  mxSuffix?: string;
  rule: 'accepts-all';
  name: string;
}

export const PROVIDER_RULES: readonly ProviderRule[] = [
  { mxSuffix: '.yahoodns.net', rule: 'accepts-all', name: 'Yahoo' },
  { domain: 'yahoo.com', rule: 'accepts-all', name: 'Yahoo' },
  { domain: 'aol.com', rule: 'accepts-all', name: 'AOL' },
  { domain: 'ymail.com', rule: 'accepts-all', name: 'Yahoo' },
  { mxSuffix: '.antispamcloud.com', rule: 'accepts-all', name: 'SpamExperts' },
  { mxSuffix: '.mimecast.com', rule: 'accepts-all', name: 'Mimecast' },
];

/** The rule for a domain and its MX hosts (lower case, no trailing dot), if any. */
export function providerRule(domain: string, mxHosts: readonly string[], rules = PROVIDER_RULES): ProviderRule | undefined {
  return rules.find((r) => (r.domain !== undefined && r.domain === domain) || (r.mxSuffix !== undefined && mxHosts.some((h) => h.endsWith(r.mxSuffix!))));
}
