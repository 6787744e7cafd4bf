import { describe, expect, it } from 'vitest';
import {
  ClockSkew,
  parseRateLimitHeaders,
  parseReset,
  parseRetryAfter,
  tightest,
  type HeaderSource,
  type RateLimitInfo,
} from '../../../src/engines/api/rate-limit-headers.js';

// 2023-11-14T22:13:20.000Z, a whole second
const NOW = 1_700_000_000_000;

/** The tightest policy an answer names (without its id) and Retry-After: what the old single-policy reading returned. */
function summary(info: RateLimitInfo): Record<string, number> {
  const { id: _id, windowMs: _w, ...rest } = tightest(info) ?? { id: '' };
  return { ...rest, ...(info.retryAt === undefined ? {} : { retryAt: info.retryAt }) };
}

const read = (headers: HeaderSource, now = NOW) => summary(parseRateLimitHeaders(headers, now));

describe('parseReset: format told apart by shape and magnitude', () => {
  it.each([
    ['epoch seconds (GitHub)', '1700000060', NOW + 60_000],
    ['epoch seconds, fractional', '1700000060.5', NOW + 60_500],
    ['epoch milliseconds', '1700000060000', NOW + 60_000],
    ['seconds until reset (Twitter-style delta)', '60', NOW + 60_000],
    ['fractional seconds until reset (Discord)', '1.25', NOW + 1_250],
    ['zero: already reset', '0', NOW],
    ['HTTP date (IMF-fixdate)', 'Tue, 14 Nov 2023 22:14:20 GMT', NOW + 60_000],
    ['ISO 8601 with Z', '2023-11-14T22:14:20Z', NOW + 60_000],
    ['ISO 8601 with ms', '2023-11-14T22:13:21.250Z', NOW + 1_250],
    ['ISO 8601 with offset', '2023-11-14T23:14:20+01:00', NOW + 60_000],
    ['padded with spaces', '  60 ', NOW + 60_000],
    ['garbage', 'soon', undefined],
    ['negative', '-5', undefined],
    ['empty', '', undefined],
  ])('%s: %j', (_name, value, expected) => {
    expect(parseReset(value, NOW)).toBe(expected);
  });

  it('corrects absolute resets for server clock skew, not deltas', () => {
    expect(parseReset('1700000060', NOW, 30_000)).toBe(NOW + 30_000);
    expect(parseReset('60', NOW, 30_000)).toBe(NOW + 60_000);
  });
});

describe('parseRetryAfter', () => {
  it.each([
    ['delay seconds', '120', NOW + 120_000],
    ['HTTP date', 'Tue, 14 Nov 2023 22:13:50 GMT', NOW + 30_000],
    ['HTTP date in the past → now', 'Tue, 14 Nov 2023 22:00:00 GMT', NOW],
    ['obsolete RFC 850 date', 'Tuesday, 14-Nov-23 22:13:50 GMT', NOW + 30_000],
    ['garbage', 'later', undefined],
  ])('%s: %j', (_name, value, expected) => {
    expect(parseRetryAfter(value, NOW)).toBe(expected);
  });
});

describe('the skew one Date header shows', () => {
  it.each([
    ['same clock', 'Tue, 14 Nov 2023 22:13:20 GMT', 0],
    ['within a second of truncation and latency', 'Tue, 14 Nov 2023 22:13:19 GMT', 0],
    ['server 60 s ahead (lower bound: a reset never looks early)', 'Tue, 14 Nov 2023 22:14:20 GMT', 60_000],
    ['server 60 s behind', 'Tue, 14 Nov 2023 22:12:20 GMT', -60_000],
    ['missing', undefined, 0],
    ['unparseable', 'yesterday', 0],
  ])('%s', (_name, date, expected) => {
    expect(new ClockSkew().observe(date, NOW)).toBe(expected);
  });
});

describe('ClockSkew narrows with each Date header', () => {
  it('converges on a server 90.7 s behind, never over-estimating the skew', () => {
    const skew = new ClockSkew();
    const trueSkew = -90_700;
    const seen: number[] = [];
    for (const phase of [0, 250, 500, 750, 950]) {
      const now = NOW + phase;
      const serverDate = new Date(Math.floor((now + trueSkew) / 1000) * 1000).toUTCString();
      seen.push(skew.observe(serverDate, now));
    }
    expect(seen.every((s) => s <= trueSkew)).toBe(true);
    expect(seen.at(-1)).toBeGreaterThan(trueSkew - 100);
  });

  it('starts over when a clock jumps', () => {
    const skew = new ClockSkew();
    skew.observe('Tue, 14 Nov 2023 23:13:20 GMT', NOW);
    expect(skew.observe('Tue, 14 Nov 2023 22:13:20 GMT', NOW + 100)).toBe(0);
  });
});

describe('parseRateLimitHeaders: real-world header sets', () => {
  it.each([
    [
      'spec trio, epoch seconds, plain object (undici)',
      { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '59', 'x-ratelimit-reset': '1700000060' },
      { limit: 60, remaining: 59, resetAt: NOW + 60_000 },
    ],
    [
      'mixed-case names, delta seconds',
      { 'X-RateLimit-Limit': '5', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': '2' },
      { limit: 5, remaining: 0, resetAt: NOW + 2_000 },
    ],
    [
      '429 with Retry-After seconds',
      { 'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1700000002000', 'retry-after': '2' },
      { limit: 5, remaining: 0, resetAt: NOW + 2_000, retryAt: NOW + 2_000 },
    ],
    ['Retry-After alone', { 'retry-after': 'Tue, 14 Nov 2023 22:13:30 GMT' }, { retryAt: NOW + 10_000 }],
    [
      'IETF draft ≤ 06: separate RateLimit-* (delta reset) and RateLimit-Policy',
      { 'ratelimit-limit': '100', 'ratelimit-remaining': '42', 'ratelimit-reset': '30', 'ratelimit-policy': '100;w=60' },
      { limit: 100, remaining: 42, resetAt: NOW + 30_000 },
    ],
    [
      'IETF draft 07: combined RateLimit with key=value',
      { ratelimit: 'limit=10, remaining=3, reset=7', 'ratelimit-policy': '10;w=60' },
      { limit: 10, remaining: 3, resetAt: NOW + 7_000 },
    ],
    [
      'IETF draft ≥ 08: structured fields, several policies → most constrained, with its own quota',
      { ratelimit: '"hour";r=900;t=1200, "minute";r=4;t=20', 'ratelimit-policy': '"hour";q=1000;w=3600, "minute";q=5;w=60' },
      { limit: 5, remaining: 4, resetAt: NOW + 20_000 },
    ],
    ['list value for the limit (limit, policy)', { 'x-ratelimit-limit': '100, 100;w=60', 'x-ratelimit-remaining': '7' }, { limit: 100, remaining: 7 }],
    ['no rate-limit headers at all', { 'content-type': 'application/json' }, {}],
    ['skewed server clock corrects an epoch reset', { date: 'Tue, 14 Nov 2023 23:13:20 GMT', 'x-ratelimit-reset': '1700003660' }, { resetAt: NOW + 60_000 }],
  ])('%s', (_name, headers, expected) => {
    expect(read(headers as Record<string, string>)).toEqual(expected);
  });

  // issue 29.9: what a lying or broken server sends
  it.each([
    ['a negative Remaining: none left', { 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '-5' }, { limit: 10, remaining: 0 }],
    ['a negative Remaining, draft structured field', { ratelimit: '"default";r=-3;t=2' }, { remaining: 0, resetAt: NOW + 2_000 }],
    ['Remaining 1e400 is no count (it was read as 1)', { 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '1e400' }, { limit: 10 }],
    ['Remaining 1.5 is no count', { 'x-ratelimit-remaining': '1.5' }, {}],
    ['Remaining abc is no count', { 'x-ratelimit-remaining': 'abc' }, {}],
    ['a count past any plan is no count', { 'x-ratelimit-limit': '99999999999999999999', 'x-ratelimit-remaining': '5' }, { remaining: 5 }],
    ['a negative Limit is no limit', { 'x-ratelimit-limit': '-1', 'x-ratelimit-remaining': '0' }, { remaining: 0 }],
    [
      'Limit 0 is kept: the window allows none',
      { 'x-ratelimit-limit': '0', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1' },
      { limit: 0, remaining: 0, resetAt: NOW + 1_000 },
    ],
    ['a reset past any clock is no reset', { 'x-ratelimit-reset': '99999999999999999999' }, {}],
  ])('%s', (_name, headers, expected) => {
    expect(read(headers as Record<string, string>)).toEqual(expected);
  });

  it('reads a fetch Headers object', () => {
    const headers = new Headers({ 'X-RateLimit-Remaining': '3', 'X-RateLimit-Reset': '2023-11-14T22:13:25Z' });
    expect(read(headers)).toEqual({ remaining: 3, resetAt: NOW + 5_000 });
  });
});

describe('parseRateLimitHeaders: every policy the headers name', () => {
  const ids = (headers: Record<string, string>, now = NOW, times = {}) =>
    parseRateLimitHeaders(headers, now, times).policies.map(({ id, limit, remaining, resetAt }) => ({ id, limit, remaining, resetAt }));

  it('express-rate-limit 8 with a quota first (draft-8): each policy with its own q', () => {
    // byte for byte what two stacked limiters write (express-rate-limit source/headers.ts: setDraft8Headers)
    const headers = {
      ratelimit: '"100000-in-1day"; r=99990; t=80000, "5-in-1sec"; r=4; t=1',
      'ratelimit-policy': '"100000-in-1day"; q=100000; w=86400; pk=:Y2M5YjE1NTBkNGNi:, "5-in-1sec"; q=5; w=1; pk=:Y2M5YjE1NTBkNGNi:',
    };
    expect(ids(headers)).toEqual([
      { id: 'ratelimit "100000-in-1day"', limit: 100_000, remaining: 99_990, resetAt: NOW + 80_000_000 },
      { id: 'ratelimit "5-in-1sec"', limit: 5, remaining: 4, resetAt: NOW + 1000 },
    ]);
    expect(summary(parseRateLimitHeaders(headers, NOW))).toEqual({ limit: 5, remaining: 4, resetAt: NOW + 1000 });
    expect(parseRateLimitHeaders(headers, NOW).policies.map((p) => p.windowMs)).toEqual([86_400_000, 1000]);
  });

  it('an X- header beside an IETF one: two policies, the stricter tightest', () => {
    const headers = {
      'x-ratelimit-limit': '1000',
      'x-ratelimit-remaining': '500',
      'x-ratelimit-reset': '1700000060',
      ratelimit: 'limit=5, remaining=5, reset=1',
    };
    expect(ids(headers).map((p) => [p.id, p.remaining])).toEqual([
      ['x-ratelimit', 500],
      ['ratelimit', 5],
    ]);
    expect(summary(parseRateLimitHeaders(headers, NOW))).toEqual({ limit: 5, remaining: 5, resetAt: NOW + 1000 });
  });

  it('one limit in two dialects (legacy beside draft-6, as express-rate-limit writes both): each dialect told the earlier reset', () => {
    const headers = {
      'x-ratelimit-limit': '5',
      'x-ratelimit-remaining': '4',
      'x-ratelimit-reset': '1700000002',
      'ratelimit-limit': '5',
      'ratelimit-remaining': '4',
      'ratelimit-reset': '2',
      'ratelimit-policy': '5;w=2',
    };
    expect(ids(headers, NOW + 300, { sentAt: NOW - 200 })).toEqual([
      { id: 'x-ratelimit', limit: 5, remaining: 4, resetAt: NOW + 1800 },
      { id: 'ratelimit-*', limit: 5, remaining: 4, resetAt: NOW + 1800 },
    ]);
  });

  it.each([
    ['draft-7', { ratelimit: 'limit=5, remaining=4, reset=2' }],
    ['draft-6', { 'ratelimit-remaining': '4', 'ratelimit-reset': '2' }],
    ['draft-8', { ratelimit: '"p";r=4;t=2' }],
    ['X-RateLimit-Reset in seconds (fastify)', { 'x-ratelimit-remaining': '4', 'x-ratelimit-reset': '2' }],
  ])('%s: a reset in seconds counts from the count, and from the answer as the latest it can be', (_name, headers) => {
    const [p] = parseRateLimitHeaders(headers, NOW + 300, { sentAt: NOW, countedAt: NOW + 10 }).policies;
    expect([p!.resetAt, p!.resetLatestAt]).toEqual([NOW + 2010, NOW + 2300]);
  });

  it('Retry-After in seconds counts from the answer (RFC 9110), not the send', () => {
    expect(parseRateLimitHeaders({ 'retry-after': '2' }, NOW + 300, { sentAt: NOW }).retryAt).toBe(NOW + 2300);
  });

  it('an epoch reset behind a Date an hour ahead: the Date is what lies, the reset is taken as written', () => {
    const headers = { date: 'Tue, 14 Nov 2023 23:13:20 GMT', 'x-ratelimit-remaining': '3', 'x-ratelimit-reset': '1700000002' };
    expect(summary(parseRateLimitHeaders(headers, NOW, { sentAt: NOW - 5 }))).toEqual({ remaining: 3, resetAt: NOW + 2000 });
  });

  it('a reset before the request even left cannot be placed: Remaining still counts', () => {
    const headers = { 'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '3', 'x-ratelimit-reset': String(NOW / 1000 - 3600) };
    expect(summary(parseRateLimitHeaders(headers, NOW, { sentAt: NOW - 5 }))).toEqual({ limit: 5, remaining: 3 });
  });
});
