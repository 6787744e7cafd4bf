import { describe, expect, it } from 'vitest';
import { MAX_IN_FLIGHT } from '../../src/engines/api/concurrency-limit.js';
import { BATCHES_IN_FLIGHT, batchesInFlight } from '../../src/engines/validator.js';

describe('batches in flight: one policy, which the CLI and the library ask', () => {
  it('feeds the API client as many batches as it may itself put in flight, the offline engine four', () => {
    expect(BATCHES_IN_FLIGHT.api).toBe(MAX_IN_FLIGHT);
    expect(batchesInFlight('api')).toBe(MAX_IN_FLIGHT);
    expect(batchesInFlight('api', 'auto')).toBe(MAX_IN_FLIGHT);
    expect(batchesInFlight('local')).toBe(4);
  });

  it('a number the caller pins wins, for either engine', () => {
    expect(batchesInFlight('api', 7)).toBe(7);
    expect(batchesInFlight('local', 12)).toBe(12);
  });
});
