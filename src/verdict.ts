/** The four statuses of the API (valid, invalid, risky, unknown); every verdict has exactly one. */
export const STATUSES = ['valid', 'invalid', 'risky', 'unknown'] as const;
export type Status = (typeof STATUSES)[number];

/**
 * The checks behind a verdict. `undefined` means "not told" (Shape B says nothing
 * of syntax or mx, the precheck never looks at DNS): written as an empty cell,
 * never invented.
 */
export interface Details {
  syntax?: boolean;
  domain?: string;
  mx?: boolean;
  disposable?: boolean;
  role?: boolean;
  /** a free-mail provider (gmail.com, ...) */
  free?: boolean;
  /** a did-you-mean address for a misspelt popular domain */
  suggestion?: string;
  /** the domain's mail server accepted the mailbox (RCPT TO, the --smtp check) */
  smtp?: boolean;
  /** the domain's mail server accepts any mailbox */
  catchAll?: boolean;
  /*
   * Why the checks came out as they did, where a boolean above cannot say it;
   * they make a row's `reason` (src/reason.ts) and are never CSV columns.
   */
  /** what DNS said against the domain (offline engine): no such domain, a null MX (RFC 7505), no host to deliver to, or no answer */
  dnsFailure?: DnsFailure;
  /** why the mailbox check (--smtp) could not tell */
  smtpFailure?: SmtpFailure;
  /** what the mail server said of a mailbox it would not take: full (for now) or disabled/moved */
  mailbox?: MailboxTrouble;
}

export type DnsFailure = 'nxdomain' | 'null-mx' | 'no-mail-host' | 'unanswered';
/**
 * refused or dropped / timed out or out of budget / still deferred when asked again / the checker itself was refused
 * / the reverse path refused, `<>` too / a non-ASCII local part and a server without SMTPUTF8
 */
export type SmtpFailure = 'unreachable' | 'timeout' | 'greylisted' | 'blocked' | 'sender-refused' | 'no-utf8';
export type MailboxTrouble = 'full' | 'disabled';

/** Codes for rows that got no verdict: why the engine could not answer (the row's `error`). */
export type ErrorCode =
  | 'RATE_LIMITED'
  | 'SERVER_ERROR'
  | 'NETWORK'
  | 'TIMEOUT'
  | 'MISSING_RESULT'
  | 'REQUEST_ERROR'
  /** --dry-run: the address would have been sent */
  | 'DRY_RUN';

export interface VerdictError {
  code: ErrorCode | string;
  message: string;
}

/**
 * One internal verdict type for every source: Shape A, Shape B, the precheck and
 * the offline engine all normalise into it.
 */
export interface Verdict {
  /** the address as it was sent (trimmed input) */
  email: string;
  isValid: boolean | undefined;
  status: Status;
  confidence: number | undefined;
  provider: string;
  details: Details;
  /** set when no verdict could be obtained; status is then `unknown` */
  error?: VerdictError;
  /** why the mailbox check was not made or could not tell, in words (serve's rawResponse) */
  smtpNote?: string;
  /**
   * The run's own means failed for this row (the DNS resolver unusable;
   * outbound SMTP judged blocked): its `unknown` says nothing of the address,
   * so it is not recorded as final in the journal or the cache, and the run
   * exits 4.
   */
  outage?: 'dns' | 'smtp';
}

export function errorVerdict(email: string, code: ErrorCode, message: string): Verdict {
  return {
    email,
    isValid: undefined,
    status: 'unknown',
    confidence: undefined,
    provider: '',
    details: {},
    error: { code, message },
  };
}
