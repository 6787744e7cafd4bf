// The library's contract at the call: bad numbers are a RangeError at once
// (not a run that hangs), and an abort ends a run even when a validator never
// answers. In process: what a library caller sees.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiValidator, createLocalValidator, validate, validateFile, type Validator } from '../../src/index.js';
import { waitFor } from '../support/wait.js';

/** A validator whose answers never come, and which ignores the abort it is given. */
function neverAnswers(): Validator & { calls: number } {
  const v = {
    engine: 'api' as const,
    calls: 0,
    validate: () => {
      v.calls++;
      return new Promise<never>(() => {});
    },
    stats: () => ({ requests: 0, retries: 0, rateLimited: 0 }),
    close: async () => {},
  };
  return v;
}

async function drain<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mailsift-lib-'));
  await writeFile(join(dir, 'list.txt'), 'a@example.com\nb@example.com\n');
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('numeric options are checked at the call', () => {
  const local = { validator: neverAnswers() };
  it.each<[string, () => unknown, RegExp]>([
    ['validate concurrency 0', () => validate(['a@example.com'], { ...local, concurrency: 0 }), /concurrency must be an integer of at least 1, not 0/],
    ['validate concurrency 1.5', () => validate(['a@example.com'], { ...local, concurrency: 1.5 }), /concurrency .* not 1\.5/],
    ['validate batchSize NaN', () => validate(['a@example.com'], { ...local, batchSize: Number.NaN }), /batchSize must be an integer from 1 to 1000, not NaN/],
    ['validate batchSize 1001', () => validate(['a@example.com'], { ...local, batchSize: 1001 }), /batchSize .* not 1001/],
    ['validateFile concurrency -1', () => validateFile(join(dir, 'list.txt'), { ...local, concurrency: -1 }), /concurrency .* not -1/],
    ['createApiValidator concurrency 0', () => createApiValidator({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k', concurrency: 0 }), /concurrency .* not 0/],
    [
      'createApiValidator timeoutMs NaN',
      () => createApiValidator({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k', timeoutMs: Number.NaN }),
      /timeoutMs must be a finite number/,
    ],
    [
      'createApiValidator retries -1',
      () => createApiValidator({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k', retries: -1 }),
      /retries must be an integer of at least 0, not -1/,
    ],
    ['createLocalValidator dnsTimeoutMs Infinity', () => createLocalValidator({ dnsTimeoutMs: Infinity }), /dnsTimeoutMs .* not Infinity/],
    [
      'createLocalValidator smtp.perHost 0',
      () => createLocalValidator({ smtp: { helo: 'h.test', from: '', port: 25, timeoutMs: 1000, concurrency: 4, perHost: 0, retryDelayMs: 0 } }),
      /smtp\.perHost .* not 0/,
    ],
    [
      'createLocalValidator smtp.concurrency 0',
      () => createLocalValidator({ smtp: { helo: 'h.test', from: '', port: 25, timeoutMs: 1000, concurrency: 0, perHost: 2, retryDelayMs: 0 } }),
      /smtp\.concurrency .* not 0/,
    ],
  ])('%s: RangeError naming it', (_name, call, why) => {
    expect(call).toThrow(RangeError);
    expect(call).toThrow(why);
  });
});

describe('an abort ends the run even when the validator never answers', () => {
  it("validate rejects with the signal's reason", async () => {
    const validator = neverAnswers();
    const ac = new AbortController();
    const run = drain(validate(['a@example.com', 'b@example.com'], { validator, signal: ac.signal }));
    // aborted once the call is on its way (and will never come back)
    await waitFor(() => validator.calls > 0, { what: 'the validator to be called', timeoutMs: 1000 });
    expect(validator.calls).toBe(1);
    ac.abort();
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
  }, 5000);

  it("validateFile rejects with the signal's reason; an abort before the start too", async () => {
    const reason = new Error('caller gave up');
    const ac = new AbortController();
    const run = drain(validateFile(join(dir, 'list.txt'), { validator: neverAnswers(), signal: ac.signal }));
    setTimeout(() => ac.abort(reason), 20);
    await expect(run).rejects.toBe(reason);
    await expect(drain(validate(['a@example.com'], { validator: neverAnswers(), signal: AbortSignal.abort() }))).rejects.toMatchObject({ name: 'AbortError' });
  }, 5000);

  it('a consumer that stops early is not held by calls that never answer', async () => {
    const addresses = Array.from({ length: 10 }, (_, i) => (i === 0 ? 'not-an-address' : `u${i}@example.com`));
    for await (const v of validate(addresses, { validator: neverAnswers(), batchSize: 1, concurrency: 16 })) {
      expect(v.status).toBe('invalid'); // the precheck answers the first row without a call
      break;
    }
  }, 5000);
});
