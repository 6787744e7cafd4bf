import { EnvHttpProxyAgent, Pool, type Dispatcher } from 'undici';
import { UsageError } from '../../errors.js';

type Env = Record<string, string | undefined>;

/** The proxy settings in the environment, lower case first as curl reads them. */
export function proxyEnv(env: Env = process.env): { httpProxy: string; httpsProxy: string; noProxy: string } {
  const pick = (name: string) => env[name.toLowerCase()] || env[name] || '';
  return { httpProxy: pick('HTTP_PROXY'), httpsProxy: pick('HTTPS_PROXY'), noProxy: pick('NO_PROXY') };
}

/**
 * undici takes only http(s) proxy URLs and throws (a stack trace, exit 1) on
 * anything else: a typo in the environment is the user's to fix, so it is a
 * usage error that names the variable — never its value, which may hold a password.
 */
function checkProxyUrl(name: string, value: string): void {
  if (!value) return;
  const protocol = URL.canParse(value) ? new URL(value).protocol : undefined;
  if (protocol !== 'http:' && protocol !== 'https:') {
    throw new UsageError(`${name} (or ${name.toLowerCase()}) is not a usable proxy URL: expected http://host:port`);
  }
}

/**
 * The dispatcher the API client talks through: undici's EnvHttpProxyAgent when
 * HTTPS_PROXY/HTTP_PROXY is set (it also applies NO_PROXY), a keep-alive pool
 * to the base URL otherwise. The values are handed over explicitly — never
 * left for undici to read from process.env — so tests can pass their own env,
 * and a proxy URL (which may carry a password) is never echoed by us.
 */
export function apiDispatcher(origin: string, connections: number, env: Env = process.env): Dispatcher {
  const proxy = proxyEnv(env);
  const agentOptions = { connections: Math.max(1, connections), keepAliveTimeout: 30_000 };
  if (!proxy.httpProxy && !proxy.httpsProxy) return new Pool(origin, agentOptions);
  checkProxyUrl('HTTP_PROXY', proxy.httpProxy);
  checkProxyUrl('HTTPS_PROXY', proxy.httpsProxy);
  return new EnvHttpProxyAgent({ ...agentOptions, ...proxy });
}
