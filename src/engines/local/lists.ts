import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The domain and mailbox lists of the offline engine, loaded once per process
 * on first use (about 120,000 disposable domains: ~50 ms, kept in Sets).
 */
export interface DomainLists {
  disposable: ReadonlySet<string>;
  /** domains whose every subdomain is disposable too */
  disposableWildcard: ReadonlySet<string>;
  free: ReadonlySet<string>;
  disposableVersion: string;
}

const require = createRequire(import.meta.url);
let cached: DomainLists | undefined;

export function domainLists(): DomainLists {
  if (cached) return cached;
  const disposable = new Set<string>(require('disposable-email-domains') as string[]);
  const disposableWildcard = new Set<string>(require('disposable-email-domains/wildcard.json') as string[]);
  const disposableVersion = (require('disposable-email-domains/package.json') as { version: string }).version;
  // freemail's own entry point pulls in tldjs and scans arrays; its data file is all we need
  const freeFile = join(dirname(require.resolve('freemail/package.json')), 'data', 'free.txt');
  const free = new Set<string>();
  for (const line of readFileSync(freeFile, 'utf8').split('\n')) {
    const d = line.trim().toLowerCase();
    if (d) free.add(d);
  }
  cached = { disposable, disposableWildcard, free, disposableVersion };
  return cached;
}

/** `domain` is an ASCII, lower-case domain. */
export function isDisposableDomain(lists: DomainLists, domain: string): boolean {
  if (lists.disposable.has(domain)) return true;
  for (let d = domain; ; ) {
    if (lists.disposableWildcard.has(d)) return true;
    const dot = d.indexOf('.');
    if (dot < 0) return false;
    d = d.slice(dot + 1);
  }
}

/**
 * Role mailboxes: RFC 2142 §3-5 and the common ones of the trade. Compared
 * after lower-casing, dropping a `+tag` and the separators `.`, `-`, `_`, so
 * `No-Reply`, `no_reply+x` and `noreply` are one entry.
 */
const ROLES = new Set(
  [
    // RFC 2142
    'info', 'marketing', 'sales', 'support', 'abuse', 'noc', 'security', 'postmaster',
    'hostmaster', 'usenet', 'news', 'webmaster', 'www', 'uucp', 'ftp',
    // common
    'admin', 'administrator', 'root', 'sysadmin', 'contact', 'contactus', 'hello', 'help',
    'helpdesk', 'service', 'services', 'customerservice', 'office', 'team', 'staff', 'billing',
    'accounts', 'accounting', 'finance', 'invoices', 'hr', 'jobs', 'careers', 'recruiting',
    'enquiries', 'enquiry', 'inquiries', 'inquiry', 'feedback', 'press', 'media', 'pr',
    'privacy', 'legal', 'compliance', 'newsletter', 'newsletters', 'notifications', 'alerts',
    'orders', 'shop', 'store', 'mail', 'mailerdaemon', 'noreply', 'donotreply', 'nobody',
    'bounce', 'bounces', 'list', 'lists', 'subscribe', 'unsubscribe', 'it', 'dev', 'devops',
    'marketing', 'partners', 'reception', 'all', 'everyone',
  ],
);

export function isRoleLocalPart(local: string): boolean {
  if (local.length > 24) return false;
  // fast path: a plain lower-case atom is its own key (no allocation)
  let plain = true;
  for (let i = 0; i < local.length && plain; i++) {
    const c = local.charCodeAt(i);
    plain = (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39);
  }
  if (plain) return ROLES.has(local);
  let key = local.toLowerCase();
  const plus = key.indexOf('+');
  if (plus >= 0) key = key.slice(0, plus);
  return ROLES.has(key.replace(/[._-]/g, ''));
}
