import { Option } from 'commander';
import { type FlagsOf, spec } from './option-table.js';
import { intIn, positiveNumber } from './parse-flags.js';

/**
 * The options that `validate` and `check` share, declared once: the same
 * spelling, help, parser and default wherever they appear.
 */
export const ENGINE_OPTIONS = {
  engine: spec<'api' | 'local' | 'offline' | undefined>(() =>
    new Option('--engine <engine>', 'api, or local (alias offline) for the offline engine (default: api when a key is configured)')
      .choices(['api', 'local', 'offline'])),
  baseUrl: spec<string | undefined>(() => new Option('--base-url <url>', 'the API base address (env MAILSIFT_BASE_URL)')),
  apiKeyFile: spec<string | undefined>(() => new Option('--api-key-file <file>', 'read the API key from this file (else env MAILSIFT_API_KEY, else the key stored by mailsift login)')),
  timeout: spec<number>(() => new Option('--timeout <seconds>', 'per-request timeout, API engine').argParser(positiveNumber).default(30)),
  retries: spec<number>(() =>
    new Option('--retries <n>', 'retries per request for retryable failures, API engine').argParser(intIn(0, 100)).default(5)),
  verbose: spec<boolean | undefined>(() => new Option('-v, --verbose', 'log each API request and answer, and each change of the in-flight limit, on stderr (the key redacted)')),
  dnsServer: spec<string | undefined>(() =>
    new Option('--dns-server <host[:port]>', 'DNS resolver for the offline engine (default: the system resolver)')),
  dns: spec<boolean>(() => new Option('--no-dns', 'offline engine: syntax and lists only, no DNS lookups (mx left empty)')),
  dnsTimeout: spec<number>(() => new Option('--dns-timeout <ms>', 'per DNS query, offline engine').argParser(intIn(1, 600_000)).default(2000)),
};

/** The values of the shared options, as commander hands them over. */
export type EngineFlags = FlagsOf<typeof ENGINE_OPTIONS>;
