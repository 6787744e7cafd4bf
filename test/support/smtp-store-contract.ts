import { describe, expect, it } from 'vitest';
import type { SessionBudget, SmtpCache } from '../../src/engines/local/smtp/stores.js';
import { clockReading } from './fake-clock.js';
import type { Clock } from '../../src/time/clock.js';

/**
 * What every SmtpCache and SessionBudget must do, written once so that a
 * shared (Redis) implementation can run the same cases with its own factory.
 */
export function cacheContract(name: string, make: (clock: Clock) => SmtpCache) {
  describe(`${name}: SmtpCache`, () => {
    it('keeps catch-all results and mailbox findings for their TTL, then forgets them', async () => {
      let t = 1_000;
      const cache = make(clockReading(() => t));
      expect(await cache.getCatchAll('example.com')).toBeUndefined();
      await cache.setCatchAll('example.com', true, 500);
      await cache.setCatchAll('other.example', false, 500);
      await cache.setMailbox('ann@example.com', 'refused', 2_000);
      expect(await cache.getCatchAll('example.com')).toBe(true);
      expect(await cache.getCatchAll('other.example')).toBe(false);
      t += 600;
      expect(await cache.getCatchAll('example.com')).toBeUndefined();
      expect(await cache.getMailbox('ann@example.com')).toBe('refused');
      t += 2_000;
      expect(await cache.getMailbox('ann@example.com')).toBeUndefined();
    });
  });
}

export function budgetContract(name: string, make: (perHost: number) => SessionBudget) {
  describe(`${name}: SessionBudget`, () => {
    it('lets perHost sessions open to one host, the next when one is released; hosts are apart', async () => {
      const budget = make(2);
      const a = await budget.acquire('mx.a');
      await budget.acquire('mx.a');
      await budget.acquire('mx.b');
      let third = false;
      const waiting = budget.acquire('mx.a').then((l) => {
        third = true;
        return l;
      });
      // another host's lease, asked for after it: had the third been let through, it would be by now
      (await budget.acquire('mx.c')).release();
      expect(third).toBe(false);
      a.release();
      a.release(); // twice is once
      (await waiting).release();
      expect(third).toBe(true);
    });

    it('gives up waiting when the signal aborts', async () => {
      const budget = make(1);
      await budget.acquire('mx.a');
      const ac = new AbortController();
      const waiting = budget.acquire('mx.a', ac.signal);
      ac.abort(new Error('stop'));
      await expect(waiting).rejects.toThrow('stop');
    });
  });
}
