import { describe, expect, it } from 'vitest';
import { networkFailure } from '../../../src/engines/api/failure.js';
import { classify } from '../../../src/engines/api/http.js';

const err = (code: string) => JSON.stringify({ success: false, error: { code, message: 'm', details: 'd' } });

describe('classify: status codes read as PRODUCT.md §1 says', () => {
  it.each([
    [200, '{"success":true,"results":[]}', 'ok'],
    [200, '{"success":tr', 'retryable'],
    [200, '', 'retryable'],
    [401, err('UNAUTHORIZED'), 'auth'],
    [403, '<html>Forbidden</html>', 'auth'],
    [429, err('RATE_LIMITED'), 'rate-limited'],
    [413, '', 'too-large'],
    [400, err('TOO_MANY_EMAILS'), 'too-large'],
    [400, err('INVALID_EMAIL'), 'bad-address'],
    [400, err('INVALID_REQUEST'), 'request-error'],
    [404, '', 'request-error'],
    [408, '', 'retryable'],
    [425, '', 'retryable'],
    [500, err('SERVER_ERROR'), 'retryable'],
    [502, '<html>Bad gateway</html>', 'retryable'],
    [503, '', 'retryable'],
  ])('%i %s → %s', (status, body, kind) => {
    expect(classify(status, body).kind).toBe(kind);
  });

  it('names the failure a retryable row will carry', () => {
    expect(classify(408, '')).toMatchObject({ code: 'TIMEOUT' });
    expect(classify(503, err('SERVER_ERROR'))).toMatchObject({ code: 'SERVER_ERROR', detail: 'HTTP 503 SERVER_ERROR' });
    expect(classify(422, err('NOPE'))).toEqual({ kind: 'request-error', status: 422, code: 'NOPE' });
  });
});

describe("the server's error.code (issue 29.12)", () => {
  it('is capped and loses its control characters: no terminal escape, no newline, no bidi override', () => {
    expect(classify(503, err('X'.repeat(10_000_000)))).toMatchObject({ detail: `HTTP 503 ${'X'.repeat(64)}` });
    expect(classify(422, err('BAD\u001b[2J\u001b]0;owned\u0007\r\nREQUEST\u202e'))).toEqual({
      kind: 'request-error',
      status: 422,
      code: 'BAD [2J ]0;owned   REQUEST ',
    });
  });
});

describe('networkFailure: what the user reads when no HTTP answer came', () => {
  const target = { url: new URL('https://api.example.com/api/validate/bulk'), method: 'POST', timeoutMs: 30_000 };
  const sysErr = (code: string) => Object.assign(new Error(code), { code });
  it.each([
    [sysErr('ENOTFOUND'), 'dns', 'could not resolve the API host api.example.com (ENOTFOUND)'],
    [sysErr('EAI_AGAIN'), 'dns', 'could not resolve the API host api.example.com (EAI_AGAIN)'],
    [sysErr('ECONNREFUSED'), 'connect', 'could not connect to api.example.com:443 (ECONNREFUSED)'],
    // undici may aggregate one error per address tried
    [Object.assign(new AggregateError([sysErr('ECONNREFUSED')]), {}), 'connect', 'could not connect to api.example.com:443 (ECONNREFUSED)'],
    [sysErr('CERT_HAS_EXPIRED'), 'tls', 'TLS handshake with api.example.com:443 failed (CERT_HAS_EXPIRED)'],
    [sysErr('ERR_TLS_CERT_ALTNAME_INVALID'), 'tls', 'TLS handshake with api.example.com:443 failed (ERR_TLS_CERT_ALTNAME_INVALID)'],
    [sysErr('UND_ERR_HEADERS_TIMEOUT'), 'timeout', 'no answer within 30 s to POST https://api.example.com/api/validate/bulk (timed out)'],
    [sysErr('ECONNRESET'), 'network', 'connection to api.example.com:443 broke before an answer (ECONNRESET)'],
  ])('%s → %s', (err, kind, text) => {
    expect(networkFailure(err, false, target)).toEqual({ kind, text });
  });
});
