import { createRequire } from 'node:module';
import type { EnvHttpProxyAgent as EnvHttpProxyAgentType, Pool as PoolType } from 'undici';

/**
 * The parts of undici the API client uses, required one by one: the package's
 * index loads fetch, WebSocket, the cache, cookies and mocks as well, which
 * took 0.06–0.1 s of CPU at every start of an API run (a one-address file,
 * runs alternating: 0.40–0.46 s against 0.34–0.37 s). undici 7 has no exports
 * map, so these paths are its own files; the API tests load undici through
 * here, so an undici that moved them fails the tests, not a user.
 */
const require = createRequire(import.meta.url);

// What the index does for every dispatcher: request(), stream() and the rest
// are methods of Dispatcher, as undici's types say.
Object.assign(
  (require('undici/lib/dispatcher/dispatcher.js') as { prototype: object }).prototype,
  require('undici/lib/api/index.js') as object,
);

export const Pool = require('undici/lib/dispatcher/pool.js') as typeof PoolType;

/** Loaded only when a proxy is configured: it brings the Agent and ProxyAgent along. */
export const loadEnvHttpProxyAgent = (): typeof EnvHttpProxyAgentType =>
  require('undici/lib/dispatcher/env-http-proxy-agent.js') as typeof EnvHttpProxyAgentType;
