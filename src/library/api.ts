import { createApiValidator as createClient, type ApiConfig } from '../engines/api/client.js';
import type { Validator } from '../engines/validator.js';
import { checkInteger, checkMs } from '../check-options.js';

/** The API client's settings; all but the address and the key have the CLI's defaults. */
export type ApiValidatorOptions = Partial<ApiConfig> & Pick<ApiConfig, 'baseUrl' | 'apiKey'>;

/**
 * The API engine of `mailsift validate`: bulk requests under the rate limit,
 * retries, batch halving and splitting. Defaults as the CLI's: a 30 s timeout,
 * 5 retries, requests in flight as the server allows (`concurrency: 'auto'`,
 * at most 64; a number pins it). Close it when done.
 */
export function createApiValidator(options: ApiValidatorOptions): Validator {
  // checked here, at the call: 0 requests in flight, or a NaN timeout, would hang the first run
  checkMs('timeoutMs', options.timeoutMs, 1);
  checkInteger('retries', options.retries, 0);
  if (options.concurrency !== ('auto' as unknown)) checkInteger('concurrency', options.concurrency, 1);
  return createClient({ timeoutMs: 30_000, retries: 5, concurrency: 'auto', ...options, baseUrl: options.baseUrl.replace(/\/+$/, '') });
}
