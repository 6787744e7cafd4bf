import { describe, expect, it } from 'vitest';
import { classify } from '../../src/validate/api/http.js';

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
