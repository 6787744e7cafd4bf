import { readFileSync } from 'node:fs';
import { UsageError } from '../errors.js';
import { isLoopback } from '../serve/config.js';

export interface EngineChoiceInput {
  engine?: string;
  baseUrl?: string;
  apiKeyFile?: string;
}

export type EngineChoice =
  | { engine: 'api'; baseUrl: string; apiKey: string }
  | { engine: 'local'; notice?: string };

/**
 * Which engine a run uses, and the API's address and key. Precedence: flags >
 * environment > defaults. The key comes only from a file or the environment —
 * never from argv, where `ps` and shell history would show it.
 */
export function resolveEngine(input: EngineChoiceInput, env: NodeJS.ProcessEnv = process.env): EngineChoice {
  if (input.engine !== undefined && input.engine !== 'api' && input.engine !== 'local') {
    throw new UsageError(`--engine ${input.engine}: expected api or local`);
  }
  if (input.engine === 'local') return { engine: 'local' };
  const apiKey = readApiKey(input.apiKeyFile, env);
  if (!apiKey) {
    if (input.engine === 'api') {
      throw new UsageError('no API key: set MAILSIFT_API_KEY or pass --api-key-file FILE (or use --engine local)');
    }
    return {
      engine: 'local',
      notice: 'no API key configured (MAILSIFT_API_KEY or --api-key-file): using the offline engine',
    };
  }
  const raw = input.baseUrl ?? env.MAILSIFT_BASE_URL;
  if (!raw) throw new UsageError('no API address: pass --base-url URL or set MAILSIFT_BASE_URL');
  return { engine: 'api', baseUrl: checkBaseUrl(raw), apiKey };
}

function readApiKey(file: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  if (file === undefined) return env.MAILSIFT_API_KEY?.trim() || undefined;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as { code?: string }).code;
    throw new UsageError(`--api-key-file ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : 'cannot read it'}`);
  }
  const key = text.trim();
  if (!key) throw new UsageError(`--api-key-file ${file}: the file is empty`);
  if (/\s/.test(key)) throw new UsageError(`--api-key-file ${file}: expected one key on one line`);
  return key;
}

/** The API's base URL; plain http is refused except to loopback (the key would travel in clear). */
function checkBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--base-url ${raw}: not a URL`);
  }
  // First: the messages below quote the URL, and must never quote a credential.
  if (url.username || url.password) throw new UsageError('--base-url: credentials in the URL are not allowed');
  if (url.protocol === 'http:' && !isLoopback(url.hostname)) {
    throw new UsageError(`--base-url ${url.origin}: plain http is only allowed to loopback; use https`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`--base-url ${raw}: expected an http(s) URL`);
  }
  return url.href.replace(/\/+$/, '');
}
