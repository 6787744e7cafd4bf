import { createRequire } from 'node:module';
import type { Dispatcher, EnvHttpProxyAgent as EnvHttpProxyAgentType, Pool as PoolType } from 'undici';

/**
 * The three parts of undici the API client uses, required one by one: the
 * package's index loads fetch, WebSocket, the cache, cookies and mocks as well,
 * and that alone was 0.15–0.2 s of CPU at every start of an API run
 * (`node --cpu-prof`, a one-address file: 38% of the run). undici 7 has no
 * exports map, so these paths are its public files; a test imports through
 * here, so an undici that moved them fails the tests, not a user.
 */
const require = createRequire(import.meta.url);

export const Pool = require('undici/lib/dispatcher/pool.js') as typeof PoolType;

/** Loaded only when a proxy is configured: it brings the Agent and ProxyAgent along. */
export const loadEnvHttpProxyAgent = (): typeof EnvHttpProxyAgentType =>
  require('undici/lib/dispatcher/env-http-proxy-agent.js') as typeof EnvHttpProxyAgentType;

const requestOf = require('undici/lib/api/api-request.js') as (
  this: Dispatcher,
  options: Dispatcher.RequestOptions,
) => Promise<Dispatcher.ResponseData>;

/** `dispatcher.request(options)`, which only undici's index adds to every dispatcher. */
export function request(dispatcher: Dispatcher, options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData> {
  return requestOf.call(dispatcher, options);
}
