import type { Failure } from '../failure.js';

/** A request that got no HTTP answer, as the engines' Failure (../failure.ts) in the user's terms. */

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT']);
const CONNECT_CODES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'EADDRNOTAVAIL']);
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'ENODATA']);

/** The system or TLS error code of a failed request (undici may wrap it or aggregate several). */
export function errorCode(err: unknown): string {
  for (let e = err as { code?: unknown; cause?: unknown; errors?: unknown[] } | undefined, depth = 0; e && depth < 4; depth++) {
    if (typeof e.code === 'string' && e.code !== 'UND_ERR' && e.code !== 'UND_ERR_SOCKET') return e.code;
    const inner = Array.isArray(e.errors) && e.errors.length ? e.errors[0] : e.cause;
    if (!inner) return typeof e.code === 'string' ? e.code : '';
    e = inner as typeof e;
  }
  return '';
}

function isTls(code: string, message: string): boolean {
  return /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH)/.test(code) || /\b(SSL|TLS)\b|certificate/i.test(message);
}

/** A request that got no HTTP answer, described for the user. */
export function networkFailure(err: unknown, timedOut: boolean, target: { url: URL; method: string; timeoutMs: number }): Failure {
  const code = errorCode(err);
  const { url } = target;
  const hostPort = `${url.hostname}:${url.port || (url.protocol === 'https:' ? 443 : 80)}`;
  const tag = code ? ` (${code})` : '';
  if (timedOut || TIMEOUT_CODES.has(code) || (err as Error).name === 'TimeoutError') {
    return { kind: 'timeout', text: `no answer within ${target.timeoutMs / 1000} s to ${target.method} ${url.href} (timed out)` };
  }
  if (DNS_CODES.has(code)) return { kind: 'dns', text: `could not resolve the API host ${url.hostname}${tag}` };
  if (CONNECT_CODES.has(code)) return { kind: 'connect', text: `could not connect to ${hostPort}${tag}` };
  if (isTls(code, String((err as Error)?.message ?? ''))) return { kind: 'tls', text: `TLS handshake with ${hostPort} failed${tag}` };
  return { kind: 'network', text: `connection to ${hostPort} broke before an answer${tag || (err instanceof Error ? ` (${err.message})` : '')}` };
}
