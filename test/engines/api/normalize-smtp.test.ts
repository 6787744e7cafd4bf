import { describe, expect, it } from 'vitest';
import { normalizeBulk } from '../../../src/engines/api/normalize.js';

// A server that runs the mailbox check (mailsift serve --smtp) says so in
// details.smtp / details.catchAll: the smtp and catch_all columns carry it
// through the API engine too, whichever way the item is read.
describe('the mailbox check through the API engine', () => {
  const item = (details: Record<string, unknown>, confidence: unknown = 0.97) => ({
    email: 'a@x.test',
    isValid: true,
    status: 'valid',
    confidence,
    provider: 'mailsift-local',
    details,
  });

  it('keeps smtp and catchAll from a well-formed item and from one that needs copying', () => {
    const told = { syntax: true, domain: 'x.test', mx: true, smtp: true, catchAll: false };
    const [fast] = normalizeBulk({ results: [item(told)] })!;
    // a confidence that is not a number sends the item down the copying path
    const [copied] = normalizeBulk({ results: [item(told, 'high')] })!;
    for (const v of [fast!, copied!]) expect(v.details).toMatchObject({ smtp: true, catchAll: false });
  });

  it('leaves them empty when the server does not tell, or tells something that is not a boolean', () => {
    const [none] = normalizeBulk({ results: [item({ syntax: true })] })!;
    const [odd] = normalizeBulk({ results: [item({ syntax: true, smtp: 'yes' })] })!;
    expect(none!.details.smtp).toBeUndefined();
    expect(odd!.details.smtp).toBeUndefined();
    expect(odd!.details.catchAll).toBeUndefined();
  });
});
