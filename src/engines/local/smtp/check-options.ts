import type { Clock } from '../../../time/clock.js';
import type { SessionOutcome, TlsMode } from './dialogue.js';
import type { ProviderRule } from './providers.js';
import type { SocksProxy } from './proxy.js';
import type { MailboxFinding, SessionBudget, SmtpCache } from './stores.js';
import type { SmtpFailure } from '../../../verdict.js';

/** What the mailbox check is told (SmtpChecker), and what it finds for an address. */

export interface SmtpCheckOptions {
  /** the name given in EHLO/HELO */
  helo: string;
  /** the MAIL FROM reverse path; '' is the null path `<>` (also what is asked with when a server refuses this one) */
  from: string;
  /** STARTTLS when offered (default; the certificate is not verified), or required of every server */
  tls?: TlsMode;
  port: number;
  /** per reply and per TCP/proxy handshake */
  timeoutMs: number;
  /** how long the greeting may take (default: DEFAULT_BANNER_TIMEOUT_MS, or timeoutMs when larger); always bounded by the host's budget */
  bannerTimeoutMs?: number;
  /** the most time spent on one mail server, an address whatever names point at it (default DEFAULT_HOST_BUDGET_MS) */
  hostBudgetMs?: number;
  /** the host budget is renewed after this long (serve); absent: once per run */
  hostBudgetWindowMs?: number;
  /** serve's SSRF guard: never dial an MX whose address is not on the public internet, nor an IP-literal MX name (see guard.ts) */
  publicOnly?: boolean;
  /** addresses whose check may be pending at once (serve); past it, an address is answered without the check (`note` says why) */
  maxPending?: number;
  /** once outbound SMTP is judged blocked, wait this long before trying again (default 60 s, doubling) */
  blockRetestMs?: number;
  proxy?: SocksProxy;
  /** sessions open at once in all */
  concurrency: number;
  /** sessions open at once to one mail server, an address whatever names point at it (used when no `budget` is given) */
  perHost: number;
  /** wait before asking a greylisting (4xx) server again, once */
  retryDelayMs: number;
  /** MX host name → its addresses (A, then AAAA), each tried in turn; the engine resolves through its own DNS */
  resolveHost: (host: string) => Promise<string[]>;
  onWarning: (message: string) => void;
  cache?: SmtpCache;
  budget?: SessionBudget;
  /** RCPT per transaction at most (RFC 5321 §4.5.3.1.8 says servers take 100) */
  maxRecipients?: number;
  /** how long catch-all results and mailbox findings are reused */
  cacheTtlMs?: number;
  providers?: readonly ProviderRule[];
  /**
   * Told when a session opens (serve's metrics); the function it returns is
   * called once when that session ends, with how: 'completed' (every recipient
   * asked), 'deferred' (a 4xx or 421 ended it), 'blocked' (a refusal of the
   * checker), 'refused' (another 5xx to EHLO, MAIL FROM or RSET), 'failed'
   * (a timeout or a dropped connection).
   */
  onSession?: () => (outcome: SessionOutcome) => void;
  /** what hosts' health, budgets, the blocked-port judgement and the check's own waits run on; tests pass a fake one */
  clock?: Clock;
}

/** What the check found for one address; mailbox and catchAll absent when it could not tell. */
export interface SmtpFinding {
  mailbox?: MailboxFinding;
  catchAll?: boolean;
  /** set when mailbox is absent because the check failed */
  failure?: SmtpFailure;
  /** not asked: the domain's mail service accepts every address at RCPT time (providers.ts) */
  acceptsAll?: true;
  /** in words, when the check was not made or could not tell (serve's rawResponse) */
  note?: string;
}
