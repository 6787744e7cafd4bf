import { isIP } from 'node:net';

/** Whether `host` names this machine's loopback: where plain http (the API's base URL, serve without TLS) is allowed. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  return h.startsWith('::ffff:127.');
}
