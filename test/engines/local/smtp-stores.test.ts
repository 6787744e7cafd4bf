import { describe, expect, it } from 'vitest';
import { MemorySessionBudget, MemorySmtpCache } from '../../../src/engines/local/smtp/stores.js';
import { budgetContract, cacheContract } from '../../support/smtp-store-contract.js';

cacheContract('in memory', (clock) => new MemorySmtpCache({ clock }));
budgetContract('in memory', (n) => new MemorySessionBudget(n));

describe('MemorySmtpCache bounds', () => {
  it('forgets the oldest entry past its size', async () => {
    const cache = new MemorySmtpCache({ maxDomains: 2 });
    await cache.setCatchAll('a.test', true, 60_000);
    await cache.setCatchAll('b.test', true, 60_000);
    await cache.setCatchAll('c.test', true, 60_000);
    expect(await cache.getCatchAll('a.test')).toBeUndefined();
    expect(await cache.getCatchAll('c.test')).toBe(true);
  });
});
