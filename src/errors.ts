/** Exit codes of PRODUCT.md §3. */
export const EXIT = {
  ok: 0,
  unexpected: 1,
  usage: 2,
  auth: 3,
  rowErrors: 4,
  failOn: 5,
  sigint: 130,
  sigterm: 143,
} as const;

/**
 * An error whose message is fit for the user (one line, no stack) and which
 * carries the contract's exit code. `cli/main.ts` is the only place that turns it
 * into an exit status.
 */
export class MailsiftError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'MailsiftError';
  }
}

export class UsageError extends MailsiftError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, EXIT.usage, options);
    this.name = 'UsageError';
  }
}

/** The server refused the API key (401/403). Never carries the key. */
export class AuthError extends MailsiftError {
  constructor(message: string) {
    super(message, EXIT.auth);
    this.name = 'AuthError';
  }
}
