import type { Checks } from './decide.js';
import { domainLists, isDisposableDomain, isRoleLocalPart, type DomainLists } from './lists.js';
import { suggestDomain } from './suggest.js';
import { parseAddress } from '../../codec/syntax.js';

/** What the lists say of a domain; the same for every address of it. */
interface DomainFacts {
  disposable: boolean;
  free: boolean;
  suggestion: string | undefined;
}

// bounds the per-domain memo on inputs with millions of distinct domains
const MAX_MEMO = 100_000;

/**
 * The checks that need no network: syntax, disposable, role, free, did-you-mean.
 * `dns` is 'skipped' in what it returns; the engine fills it in. List facts are
 * memoised per domain, so the suggestion's edit distances run once per domain.
 */
export function createOfflineChecker(lists: DomainLists = domainLists()): (email: string) => Checks {
  const memo = new Map<string, DomainFacts>();
  const facts = (domain: string): DomainFacts => {
    let f = memo.get(domain);
    if (!f) {
      if (memo.size >= MAX_MEMO) memo.clear();
      f = {
        disposable: isDisposableDomain(lists, domain),
        free: lists.free.has(domain),
        suggestion: suggestDomain(domain, lists.free),
      };
      memo.set(domain, f);
    }
    return f;
  };
  return (email) => {
    const parsed = parseAddress(email);
    if (!parsed) return { syntax: false, dns: 'skipped' };
    const { local, domain, literal } = parsed;
    const role = isRoleLocalPart(local);
    if (literal) return { syntax: true, domain, literal, role, dns: 'skipped' };
    const f = facts(domain);
    return {
      syntax: true,
      domain,
      disposable: f.disposable,
      role,
      free: f.free,
      suggestion: f.suggestion === undefined ? undefined : `${local}@${f.suggestion}`,
      dns: 'skipped',
    };
  };
}

/** The domain DNS is asked about: none for bad syntax or an address literal. */
export function dnsDomain(c: Checks): string | undefined {
  return c.syntax && !c.literal && c.domain ? c.domain : undefined;
}
