import { describe, expect, it } from 'vitest';
import { MAX_IN_FLIGHT } from '../../src/engines/api/concurrency-limit.js';
import { BATCH_LEAD, BATCHES_IN_FLIGHT, batchesInFlight } from '../../src/engines/validator.js';

describe('batches in flight: one policy, which the CLI and the library ask', () => {
  it('feeds the API client its limit as it moves and two batches more, up to the most it may put in flight', () => {
    expect(BATCHES_IN_FLIGHT.api).toBe(MAX_IN_FLIGHT);
    expect(BATCH_LEAD).toBe(2);
    let limit = 1;
    const api = { engine: 'api' as const, requestsAllowed: () => limit };
    for (const w of [batchesInFlight(api), batchesInFlight(api, 'auto')]) {
      expect(w.most).toBe(MAX_IN_FLIGHT);
      limit = 1;
      expect(w.now()).toBe(3);
      limit = 8; // slow start grew it: asked again, not fixed at the start
      expect(w.now()).toBe(10);
      limit = MAX_IN_FLIGHT;
      expect(w.now()).toBe(MAX_IN_FLIGHT);
    }
  });

  it('an engine that keeps its own limits: its own number (the offline engine four; an API engine without a limit to tell, 64)', () => {
    expect(batchesInFlight({ engine: 'local' }).now()).toBe(4);
    expect(batchesInFlight({ engine: 'local' }).most).toBe(4);
    expect(batchesInFlight({ engine: 'api' }).now()).toBe(MAX_IN_FLIGHT);
  });

  it('a number the caller pins wins, for either engine', () => {
    const api = { engine: 'api' as const, requestsAllowed: () => 1 };
    expect(batchesInFlight(api, 7).now()).toBe(7);
    expect(batchesInFlight(api, 7).most).toBe(7);
    expect(batchesInFlight({ engine: 'local' }, 12).now()).toBe(12);
  });
});
