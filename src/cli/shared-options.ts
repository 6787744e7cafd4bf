import { type Command, Option } from 'commander';
import { intIn, positiveNumber } from './parse-flags.js';

/**
 * The options that `validate` and `check` (and partly `serve`) share, declared
 * once: the same spelling, help, parser and default wherever they appear. A
 * command adds the ones it takes by name; their values arrive typed as
 * `EngineFlags`.
 */
const SHARED = {
  engine: () => new Option('--engine <engine>', 'api or local (default: api when a key is configured)').choices(['api', 'local']),
  baseUrl: () => new Option('--base-url <url>', 'the API base address (env MAILSIFT_BASE_URL)'),
  apiKeyFile: () => new Option('--api-key-file <file>', 'read the API key from this file (env MAILSIFT_API_KEY)'),
  timeout: () => new Option('--timeout <seconds>', 'per-request timeout, API engine').argParser(positiveNumber).default(30),
  retries: () => new Option('--retries <n>', 'retries per request for retryable failures, API engine').argParser(intIn(0, 100)).default(5),
  verbose: () => new Option('-v, --verbose', 'log each API request and answer on stderr (the key redacted)'),
  dnsServer: () => new Option('--dns-server <host[:port]>', 'DNS resolver for the offline engine (default: the system resolver)'),
  dnsTimeout: () => new Option('--dns-timeout <ms>', 'per DNS query, offline engine').argParser(intIn(1, 600_000)).default(2000),
} as const;

export type SharedOption = keyof typeof SHARED;

/** The values of the shared options, as commander hands them over. */
export interface EngineFlags {
  engine?: 'api' | 'local';
  baseUrl?: string;
  apiKeyFile?: string;
  timeout: number;
  retries: number;
  verbose?: boolean;
  dnsServer?: string;
  dnsTimeout: number;
}

/** Adds the named shared options to `cmd`, in the order given. */
export function addSharedOptions(cmd: Command, ...names: SharedOption[]): Command {
  for (const name of names) cmd.addOption(SHARED[name]());
  return cmd;
}

/** Everything `validate` and `check` both take. */
export const ENGINE_OPTIONS: SharedOption[] = ['engine', 'baseUrl', 'apiKeyFile', 'timeout', 'retries', 'verbose', 'dnsServer', 'dnsTimeout'];
