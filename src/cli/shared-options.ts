import { Option } from 'commander';
import { type FlagsOf, spec } from './option-table.js';
import { dnsServer, durationMs, intIn } from './parse-flags.js';

// One parser per option, made once: every command that takes the option parses it alike.
const parseTimeout = durationMs({ bare: 's', min: 1, max: 3_600_000 });
const parseRetries = intIn(0, 100);
const parseDnsTimeout = durationMs({ bare: 'ms', min: 1, max: 600_000 });

/** The offline engine's DNS options: validate, check and serve take them alike. */
export const DNS_OPTIONS = {
  dnsServer: spec<string | undefined>(() =>
    new Option('--dns-server <host[:port]>', 'DNS resolver for the offline engine (default: the system resolver)').argParser(dnsServer)),
  dns: spec<boolean>(() => new Option('--no-dns', 'offline engine: syntax and lists only, no DNS lookups (mx left empty)')),
  /** milliseconds */
  dnsTimeout: spec<number>(() => new Option('--dns-timeout <ms>', 'per DNS query, offline engine').argParser(parseDnsTimeout).default(2000, '2000')),
};

/**
 * The options that `validate` and `check` share, declared once: the same
 * spelling, help, parser and default wherever they appear.
 */
export const ENGINE_OPTIONS = {
  engine: spec<'api' | 'local' | 'offline' | undefined>(() =>
    new Option('--engine <engine>', 'api, or local (alias offline) for the offline engine (default: api when a key is configured)')
      .choices(['api', 'local', 'offline'])),
  baseUrl: spec<string | undefined>(() => new Option('--base-url <url>', 'the API base address (env MAILSIFT_BASE_URL)')),
  // Not a way in: the flag a newcomer guesses first, caught to say where a key goes (resolveEngine). Hidden from --help.
  apiKey: spec<string | true | undefined>(() => new Option('--api-key [key]', 'refused: keys never go in flags').hideHelp()),
  apiKeyFile: spec<string | undefined>(() => new Option('--api-key-file <file>', 'read the API key from this file (else env MAILSIFT_API_KEY, else the key stored by mailsift login)')),
  /** milliseconds */
  timeout: spec<number>(() => new Option('--timeout <seconds>', 'per-request timeout, API engine').argParser(parseTimeout).default(30_000, '30')),
  retries: spec<number>(() =>
    new Option('--retries <n>', 'retries per request for retryable failures, API engine').argParser(parseRetries).default(5)),
  verbose: spec<boolean | undefined>(() => new Option('-v, --verbose', 'log each API request and answer, and each change of the in-flight limit, on stderr (the key redacted)')),
  ...DNS_OPTIONS,
};

/** The values of the shared options, as their parsers hand them over. */
export type EngineFlags = FlagsOf<typeof ENGINE_OPTIONS>;

/** What the engines take from the shared options, typed: the same for validate and check. */
export interface EngineSettings {
  timeoutMs: number;
  retries: number;
  verbose: boolean;
  dns: boolean;
  dnsServer?: string;
  dnsTimeoutMs: number;
}

export function engineSettings(flags: EngineFlags): EngineSettings {
  return {
    timeoutMs: flags.timeout,
    retries: flags.retries,
    verbose: flags.verbose === true,
    dns: flags.dns !== false,
    ...(flags.dnsServer !== undefined ? { dnsServer: flags.dnsServer } : {}),
    dnsTimeoutMs: flags.dnsTimeout,
  };
}
