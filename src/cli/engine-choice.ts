import { readFileSync } from 'node:fs';
import type { ApiConfig } from '../engines/api/client.js';
import type { LocalEngineOptions, SmtpSettings } from '../engines/local/index.js';
import { EXIT, MailsiftError, UsageError } from '../errors.js';
import { fileTrouble } from '../fs/errno.js';
import { credentialsPath, hasStoredKey, readStoredKey } from './credentials.js';
import { isLoopback } from './loopback.js';
import type { EngineSettings } from './engine-options.js';
import type { Given } from './option-record.js';

export interface EngineChoiceInput {
  engine?: string;
  /** --base-url, or MAILSIFT_BASE_URL in its stead */
  baseUrl?: string;
  apiKeyFile?: string;
  /** --api-key, refused: a key in argv is seen in `ps` and kept in shell history */
  apiKey?: unknown;
  /** --smtp, a check of the offline engine only */
  smtp?: boolean;
}

interface ApiChoice {
  engine: 'api';
  baseUrl: string;
  apiKey: string;
  /** where each came from, as the user would name it: a flag or an environment variable */
  baseUrlSource: string;
  keySource: string;
}

export type EngineChoice = ApiChoice | { engine: 'local'; notice?: string };

/**
 * Which engine a run uses, and the API's address and key. Precedence: flags >
 * environment > defaults. The key comes only from a file or the environment —
 * never from argv, where `ps` and shell history would show it.
 */
export function resolveEngine(input: EngineChoiceInput, given: Given<EngineChoiceInput>, env: Readonly<Record<string, string | undefined>>): EngineChoice {
  if (input.apiKey !== undefined) {
    // never quoted back: it is the key
    throw new UsageError(
      '--api-key: keys never go in flags (ps and shell history show them); set MAILSIFT_API_KEY, pass --api-key-file FILE or run "mailsift login"',
    );
  }
  if (input.engine !== undefined && !['api', 'local', 'offline'].includes(input.engine)) {
    throw new UsageError(`--engine ${input.engine}: expected api or local (alias offline)`);
  }
  if (input.engine === 'local' || input.engine === 'offline') return { engine: 'local' };
  const raw = input.baseUrl;
  const baseUrlSource = given.baseUrl === 'env' ? 'MAILSIFT_BASE_URL' : '--base-url';
  // The key `mailsift login` stored is read only when the API is asked for: an offline run never
  // opens it (an unreadable or planted file must not stop a run that does not need it).
  const apiAsked = input.engine === 'api' || Boolean(raw);
  const found = findApiKey(input.apiKeyFile, env, apiAsked);
  if (!found) {
    // Asked for the API (a base URL is configured, or --engine api) and no key:
    // a cron job must fail here, not quietly validate offline and exit 0.
    if (input.engine === 'api' || raw) {
      const why = input.engine === 'api' ? '--engine api' : `${baseUrlSource} is set`;
      throw new MailsiftError(`no API key (${why}): set MAILSIFT_API_KEY, pass --api-key-file FILE or run "mailsift login" (or use --engine local)`, EXIT.auth);
    }
    return {
      engine: 'local',
      notice: hasStoredKey(env)
        ? 'no API address (--base-url or MAILSIFT_BASE_URL) for the key stored by "mailsift login": using the offline engine'
        : 'no API key configured (MAILSIFT_API_KEY, --api-key-file or "mailsift login"): using the offline engine',
    };
  }
  const { key: apiKey, source: keySource } = found;
  if (!raw) throw new UsageError('no API address: pass --base-url URL or set MAILSIFT_BASE_URL');
  const choice: ApiChoice = { engine: 'api', baseUrl: checkBaseUrl(raw, baseUrlSource), apiKey, baseUrlSource, keySource };
  if (input.smtp) throw new UsageError('--smtp is a check of the offline engine: add --engine local');
  return choice;
}

/** The offline engine's settings from the planned engine settings, the same for check and validate. */
export function localSettings(settings: EngineSettings, smtp: SmtpSettings | undefined, onWarning: (line: string) => void): LocalEngineOptions {
  return { dnsServer: settings.dnsServer, dnsTimeoutMs: settings.dnsTimeoutMs, dns: settings.dns, smtp, onWarning };
}

/** The API client's settings from the planned engine settings, the same for check and validate. */
export function apiSettings(choice: ApiChoice, settings: EngineSettings, log: (line: string) => void): Omit<ApiConfig, 'concurrency'> {
  return {
    baseUrl: choice.baseUrl,
    apiKey: choice.apiKey,
    timeoutMs: settings.timeoutMs,
    retries: settings.retries,
    keySource: choice.keySource,
    // --verbose: each request and answer, the key redacted (http.ts never writes it)
    ...(settings.verbose ? { log } : {}),
  };
}

/**
 * The key and where it came from, in the order --api-key-file, MAILSIFT_API_KEY,
 * `mailsift login`'s file (looked at only when `stored` says the API is asked for).
 */
function findApiKey(file: string | undefined, env: Readonly<Record<string, string | undefined>>, stored: boolean): { key: string; source: string } | undefined {
  if (file !== undefined) return { key: readApiKey(file), source: `--api-key-file ${file}` };
  const key = env.MAILSIFT_API_KEY?.trim();
  // never quoted: it is the key
  if (key && /\s/.test(key)) throw new UsageError('MAILSIFT_API_KEY: expected one key, without spaces or line breaks');
  if (key) return { key, source: 'MAILSIFT_API_KEY' };
  const storedKey = stored ? readStoredKey(env) : undefined;
  return storedKey === undefined ? undefined : { key: storedKey, source: `the key stored by "mailsift login" (${credentialsPath(env)})` };
}

function readApiKey(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`--api-key-file ${file}: ${fileTrouble(err, 'read')}`);
  }
  const key = text.trim();
  if (!key) throw new UsageError(`--api-key-file ${file}: the file is empty`);
  if (/\s/.test(key)) throw new UsageError(`--api-key-file ${file}: expected one key on one line`);
  return key;
}

/**
 * The API's base URL; plain http is refused except to loopback (the key would
 * travel in clear). Errors blame `source`, the flag or variable the user set.
 */
function checkBaseUrl(raw: string, source: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // a value that is not a URL may hold anything: quote it only if it looks harmless
    const shown = /^[\w.:/-]{1,100}$/.test(raw) ? ` ${raw}` : '';
    throw new UsageError(`${source}${shown}: not a URL (expected e.g. https://api.example.com)`);
  }
  // First: the messages below quote the URL, and must never quote a credential.
  if (url.username || url.password) throw new UsageError(`${source}: credentials in the URL are not allowed`);
  if (url.protocol === 'http:' && !isLoopback(url.hostname)) {
    throw new UsageError(`${source} ${url.origin}: plain http is only allowed to loopback; use https`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${source} ${url.protocol}…: expected an http(s) URL`);
  }
  return url.href.replace(/\/+$/, '');
}
