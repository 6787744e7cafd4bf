import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { FREE_MAIL_DOMAINS } from './free-domains.js';

/**
 * The domain and mailbox lists of the offline engine, loaded once per process
 * on first use.
 */
export interface DomainLists {
  /** about 120,000 domains: answered from the list's text at first, see DomainList */
  disposable: DomainSet;
  /** domains whose every subdomain is disposable too */
  disposableWildcard: ReadonlySet<string>;
  free: ReadonlySet<string>;
  disposableVersion: string;
}

export interface DomainSet {
  has(domain: string): boolean;
}

// disposable-email-domains stays a package of its own, read at run time (not bundled into
// dist): the list is updated often, and users get its updates within the version range.
const require = createRequire(import.meta.url);
let cached: DomainLists | undefined;

export function domainLists(): DomainLists {
  if (cached) return cached;
  const disposable = new DomainList(readFileSync(require.resolve('disposable-email-domains/index.json')));
  const disposableWildcard = new Set<string>(require('disposable-email-domains/wildcard.json') as string[]);
  const disposableVersion = (require('disposable-email-domains/package.json') as { version: string }).version;
  const free = new Set<string>(FREE_MAIL_DOMAINS.split('\n').filter(Boolean));
  cached = { disposable, disposableWildcard, free, disposableVersion };
  return cached;
}

/**
 * The disposable list, kept as the bytes of the package's JSON (an array of
 * plain domains). Building a Set of its 120,000 entries costs more than a
 * `check` of one address does in all: decoding the 2.3 MB as UTF-8 took
 * 60-70 ms of CPU, JSON.parse and the Set 70-120 ms, where reading the bytes
 * took 7-12 ms and one search of them for `"domain"` 0.9 ms (measured with
 * the load average near 9). So the first lookups search the bytes, and a run
 * that asks more often builds the Set once and answers from it.
 */
export class DomainList implements DomainSet {
  private readonly json: Buffer;
  private set: Set<string> | undefined;
  private searches = 0;

  constructor(json: Uint8Array | string) {
    this.json = typeof json === 'string' ? Buffer.from(json) : Buffer.from(json.buffer, json.byteOffset, json.byteLength);
  }

  has(domain: string): boolean {
    if (this.set) return this.set.has(domain);
    if (++this.searches > SEARCHES_BEFORE_SET) {
      this.set = new Set<string>(JSON.parse(this.json.toString('utf8')) as string[]);
      return this.set.has(domain);
    }
    // a domain holds no quote or backslash, so a quoted match is one whole entry
    return !/["\\]/.test(domain) && this.json.includes(`"${domain}"`);
  }
}

/** below where the searches' time would pass the Set's one-off cost (about 100) */
const SEARCHES_BEFORE_SET = 64;

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
const ROLES = new Set([
  // RFC 2142
  'info',
  'marketing',
  'sales',
  'support',
  'abuse',
  'noc',
  'security',
  'postmaster',
  'hostmaster',
  'usenet',
  'news',
  'webmaster',
  'www',
  'uucp',
  'ftp',
  // common
  'admin',
  'administrator',
  'root',
  'sysadmin',
  'contact',
  'contactus',
  'hello',
  'help',
  'helpdesk',
  'service',
  'services',
  'customerservice',
  'office',
  'team',
  'staff',
  'billing',
  'accounts',
  'accounting',
  'finance',
  'invoices',
  'hr',
  'jobs',
  'careers',
  'recruiting',
  'enquiries',
  'enquiry',
  'inquiries',
  'inquiry',
  'feedback',
  'press',
  'media',
  'pr',
  'privacy',
  'legal',
  'compliance',
  'newsletter',
  'newsletters',
  'notifications',
  'alerts',
  'orders',
  'shop',
  'store',
  'mail',
  'mailerdaemon',
  'noreply',
  'donotreply',
  'nobody',
  'bounce',
  'bounces',
  'list',
  'lists',
  'subscribe',
  'unsubscribe',
  'it',
  'dev',
  'devops',
  'marketing',
  'partners',
  'reception',
  'all',
  'everyone',
]);

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
