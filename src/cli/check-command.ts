import { Command, Option } from 'commander';
import { EXIT } from '../errors.js';
import type { Verdict } from '../verdict.js';
import { resolveEngine } from './api-config.js';
import { intIn, positiveNumber } from './parse-flags.js';

interface CheckFlags {
  engine?: string;
  json?: boolean;
  dnsServer?: string;
  dnsTimeout: number;
  timeout: number;
  retries: number;
  baseUrl?: string;
  apiKeyFile?: string;
  verbose?: boolean;
}

const EXAMPLES = `
Examples:
  $ mailsift check jane@example.com
  $ mailsift check --json jane@gmial.com | jq .details.suggestion
  $ mailsift check --engine local --dns-server 127.0.0.1:5353 info@example.org
  $ MAILSIFT_API_KEY=... mailsift check --base-url https://api.example.com jane@example.com
`;

const AFTER = `
With an API key (MAILSIFT_API_KEY or --api-key-file) the address goes to
POST /api/validate; without one, the offline engine answers.
Exit status: 0 a verdict was printed (whatever its status), 2 usage error,
3 the API refused the key, 4 no verdict could be obtained (the error is printed).`;

export function checkCommand(): Command {
  return new Command('check')
    .description('validate one address and print its verdict')
    .argument('<email>', 'the address to check')
    .addOption(new Option('--engine <engine>', 'api or local (default: api when a key is configured)').choices(['api', 'local']))
    .option('--json', 'print the verdict as one JSON object')
    .option('--dns-server <host[:port]>', 'DNS resolver for the local engine (default: the system resolver)')
    .option('--dns-timeout <ms>', 'per DNS query, local engine', intIn(1, 600_000), 2000)
    .option('--timeout <seconds>', 'per-request timeout, API engine', positiveNumber, 30)
    .option('--retries <n>', 'retries for retryable failures, API engine', intIn(0, 100), 5)
    .option('--base-url <url>', 'the API base address (default: env MAILSIFT_BASE_URL)')
    .option('--api-key-file <file>', 'read the API key from this file (default: env MAILSIFT_API_KEY)')
    .option('-v, --verbose', 'log the API request and answer on stderr (the key redacted)')
    .addHelpText('before', EXAMPLES)
    .addHelpText('after', AFTER)
    .action(async (email: string, flags: CheckFlags) => {
      const verdict = await check(email.trim(), flags, (line) => process.stderr.write(`mailsift: ${line}\n`));
      process.stdout.write(
        formatVerdict(verdict, { json: flags.json === true, tty: process.stdout.isTTY === true }),
      );
      if (verdict.error) process.exitCode = EXIT.rowErrors;
    });
}

/** One verdict from whichever engine is configured; notices and warnings go to `say`. */
export async function check(email: string, flags: CheckFlags, say: (line: string) => void): Promise<Verdict> {
  const choice = resolveEngine(flags);
  // Engines are loaded when used, not whenever the CLI starts.
  if (choice.engine === 'api') {
    const { validateOneViaApi } = await import('../validate/api/client.js');
    return validateOneViaApi(
      {
        baseUrl: choice.baseUrl,
        apiKey: choice.apiKey,
        timeoutMs: flags.timeout * 1000,
        retries: flags.retries,
        concurrency: 1,
        keySource: choice.keySource,
        ...(flags.verbose ? { log: say } : {}),
      },
      email,
    );
  }
  if (choice.notice) say(choice.notice);
  const { createLocalValidator } = await import('../validate/local/index.js');
  const engine = createLocalValidator({
    dnsServer: flags.dnsServer,
    dnsTimeoutMs: flags.dnsTimeout,
    onWarning: (line) => say(`warning: ${line}`),
  });
  try {
    return await engine.validateOne(email);
  } finally {
    await engine.close();
  }
}

const yesNo = (b: boolean | undefined) => (b === undefined ? '' : b ? 'yes' : 'no');

/**
 * `--json`: one object, the API's Shape A fields (plus `error`). Otherwise one
 * `key: value` line per field, aligned on a terminal; an unknown value is empty.
 */
export function formatVerdict(v: Verdict, how: { json: boolean; tty: boolean }): string {
  if (how.json) {
    const { email, isValid, status, confidence, provider, details, error } = v;
    return `${JSON.stringify({ email, isValid, status, confidence, provider, details, error }, null, 2)}\n`;
  }
  const d = v.details;
  const rows: [string, string][] = [
    ['email', v.email],
    ['status', v.status],
    ['confidence', v.confidence === undefined ? '' : v.confidence.toFixed(2)],
    ['syntax', yesNo(d.syntax)],
    ['domain', d.domain ?? ''],
    ['mx', yesNo(d.mx)],
    ['disposable', yesNo(d.disposable)],
    ['role', yesNo(d.role)],
    ['free', yesNo(d.free)],
    ['suggestion', d.suggestion ?? ''],
    ['provider', v.provider],
  ];
  if (v.error) rows.push(['error', `${v.error.code}: ${v.error.message}`]);
  const width = Math.max(...rows.map(([k]) => k.length)) + 2;
  const label = (k: string) => (how.tty ? `${k}:`.padEnd(width) : `${k}: `);
  return rows.map(([k, val]) => `${label(k)}${val}`.trimEnd()).join('\n') + '\n';
}
