import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../../src/engines/api/backoff.js';

const top = () => 0.999999;
const zero = () => 0;

describe('backoffDelay', () => {
  it.each([
    [1, 199],
    [2, 399],
    [3, 799],
    [7, 12_799],
    [8, 14_999],
    [30, 14_999],
  ])('retry %i: full jitter below min(cap, base·2^(n-1)) → at most %i', (retry, expected) => {
    expect(backoffDelay(retry, { random: top })).toBe(expected);
  });

  it('full jitter can be zero', () => {
    expect(backoffDelay(5, { random: zero })).toBe(0);
  });

  it('never retries sooner than Retry-After', () => {
    expect(backoffDelay(1, { random: top }, 3_000)).toBe(3_000);
    expect(backoffDelay(8, { random: top }, 1_000)).toBe(14_999);
  });

  it('gives up on a Retry-After beyond the per-retry limit', () => {
    expect(backoffDelay(1, { maxRetryAfterMs: 60_000 }, 3_600_000)).toBeUndefined();
  });

  it('honours custom base and cap', () => {
    expect(backoffDelay(3, { baseMs: 10, capMs: 25, random: top })).toBe(24);
  });
});
