import { MAX_TIMER_MS, systemClock, type Clock } from '../../time/clock.js';
import { timeoutSignal, withDeadline } from '../../time/waits.js';
import type { Checks } from './decide.js';
import type { DomainDns } from './dns.js';
import { DEFAULT_HOST_BUDGET_MS, type DomainJob, type SmtpChecker, type SmtpFinding } from './smtp/checker.js';

export interface MailboxCheckOptions {
  /** serve: answer without the check after this long; the check goes on and fills the cache */
  deadlineMs?: number;
  hostBudgetMs?: number;
  /** the check is over for these addresses (by index in the batch) */
  onChecked?: (indexes: Iterable<number>) => void;
  /** what the deadline and the bound on leftover work are timed on (the engine's) */
  clock?: Clock;
}

/**
 * The mailbox check of a batch, after DNS: its addresses grouped per domain,
 * one job per domain with a usable (or implicit) MX; each address's finding
 * written into its checks. Syntax failures, NXDOMAIN, null MX, unanswered DNS
 * and disposable domains are never dialled.
 */
export async function askMailServers(
  smtp: SmtpChecker,
  dns: DomainDns,
  emails: readonly string[],
  checks: Checks[],
  o: MailboxCheckOptions,
  signal?: AbortSignal,
): Promise<void> {
  const byDomain = new Map<string, number[]>();
  checks.forEach((c, i) => {
    if (!c.syntax || c.literal || c.disposable || !c.domain) return;
    if (c.dns !== 'mx' && c.dns !== 'implicit-mx') return;
    // a non-ASCII local part too: asked with SMTPUTF8 where the server has it, else left unknown (dialogue.ts)
    const list = byDomain.get(c.domain);
    if (list) list.push(i);
    else byDomain.set(c.domain, [i]);
  });
  const jobs: DomainJob[] = [];
  /** the address as the server sees it (the domain in lower case) → the batch's indexes */
  const byEmail = new Map<string, number[]>();
  await Promise.all(
    [...byDomain].map(async ([domain, indexes]) => {
      const { hosts } = await dns.answer(domain);
      if (hosts.length === 0) return;
      for (const i of indexes) {
        const email = `${emails[i]!.slice(0, emails[i]!.lastIndexOf('@'))}@${domain}`;
        const list = byEmail.get(email);
        if (list) list.push(i);
        else byEmail.set(email, [i]);
      }
      jobs.push({ domain, hosts, emails: [...new Set(indexes.map((i) => `${emails[i]!.slice(0, emails[i]!.lastIndexOf('@'))}@${domain}`))] });
    }),
  );
  // addresses never dialled are done now
  const asked = new Set([...byEmail.values()].flat());
  o.onChecked?.([...checks.keys()].filter((i) => !asked.has(i)));
  if (jobs.length === 0) return;
  // Findings are applied as each group of domains is done; serve stops
  // waiting at its deadline and answers the rest from DNS and the lists,
  // while their check goes on and fills the cache for the next request.
  let open = true;
  /** the batch's indexes whose finding has been applied */
  const applied = new Set<number>();
  // serve: a check that outlives its answer goes on to fill the cache, but for
  // one host budget at most — leftover work is bounded, whatever the tarpit
  const clock = o.clock ?? systemClock;
  const [leftover, cancelLeftover] =
    o.deadlineMs === undefined
      ? [undefined, () => {}]
      : timeoutSignal(clock, Math.min(o.deadlineMs + (o.hostBudgetMs ?? DEFAULT_HOST_BUDGET_MS), MAX_TIMER_MS), { ref: false });
  const limit = leftover === undefined ? signal : AbortSignal.any([leftover, ...(signal ? [signal] : [])]);
  const work = smtp.checkDomains(jobs, limit, (found) => {
    if (!open) return;
    for (const [email, f] of found) {
      for (const i of byEmail.get(email) ?? []) {
        apply(checks[i]!, f);
        applied.add(i);
      }
    }
    o.onChecked?.([...found.keys()].flatMap((email) => byEmail.get(email) ?? []));
  });
  void work.finally(cancelLeftover).catch(() => undefined);
  if (o.deadlineMs === undefined) {
    await work;
    return;
  }
  await withDeadline(
    clock,
    work.catch(() => undefined),
    o.deadlineMs,
  );
  open = false;
  // Answered before the check: nothing is known of the mailbox yet. Said as a
  // timeout (smtp_timeout, never final), so that the answer carries serve's
  // UNDETERMINED and no client keeps it; the check goes on, and a later
  // request gets its finding from the cache.
  for (const i of asked) {
    if (applied.has(i)) continue;
    apply(checks[i]!, {
      failure: 'timeout',
      note: `the mailbox check takes longer than --smtp-deadline (${o.deadlineMs / 1000} s); it goes on: ask again later`,
    });
  }
}

function apply(c: Checks, f: SmtpFinding): void {
  if (f.mailbox) c.mailbox = f.mailbox;
  if (f.catchAll !== undefined) c.catchAll = f.catchAll;
  if (f.failure !== undefined) c.smtpFailure = f.failure;
  if (f.acceptsAll) c.acceptsAll = true;
  if (f.note !== undefined) c.smtpNote = f.note;
}
