/**
 * mailsift as a library: what the CLI uses, nothing more.
 * `import { validate, createLocalValidator } from 'mailsift'`.
 */
export { validate, validateFile, type FileValidateOptions, type LibraryValidateOptions, type RowVerdict } from './library/validate.js';
export type { CheckedCell, ReasonedVerdict } from './write/row-writer.js';
export { startServer, type StartServerOptions } from './library/serve.js';
export type { RunningServer } from './serve/server.js';
export { createApiValidator, type ApiValidatorOptions } from './library/api.js';
export { createLocalValidator, type LocalEngineOptions, type LocalValidator, type SmtpSettings } from './engines/local/index.js';
export type { SmtpCache, SessionBudget, SessionLease, MailboxFinding } from './engines/local/smtp/stores.js';
export type { Validator, ValidatorStats } from './engines/validator.js';
export type { Verdict, Details, Status, VerdictError, DnsFailure, SmtpFailure, MailboxTrouble } from './verdict.js';
export { reasonOf, REASONS, type Reason } from './reason.js';
export type { Summary, SmtpStats, CheckedColumn } from './summary.js';
export { MailsiftError, UsageError, XlsxError, AuthError, EXIT } from './errors.js';
export { VERSION } from './version.js';
