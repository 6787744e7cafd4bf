import { describe, expect, it } from 'vitest';
import { FirstAnswer } from '../../../src/engines/api/first-answer.js';
import { flush } from '../../support/fake-clock.js';

/**
 * The caller's rule (first-answer.ts): until the API has answered once, one
 * call at a time, its retries included; after that, every call at once. What a
 * user sees of it end to end (a refused key costs one request, a wrong URL one
 * call's retries) is in faults-e2e.test.ts; here, the rule itself.
 */

/** a call the test ends by hand; `started` says whether FirstAnswer let it begin */
function call(first: FirstAnswer, name: string, log: string[]) {
  let finish!: (answered: boolean) => void;
  let fail!: (err: Error) => void;
  const state = { started: false };
  const result = first.run(
    () =>
      new Promise<string>((resolve, reject) => {
        state.started = true;
        log.push(`${name} starts`);
        finish = (answered) => {
          if (answered) first.reached = true;
          resolve(name);
        };
        fail = (err) => reject(err);
      }),
  );
  return {
    state,
    result,
    answered: () => finish(true),
    unanswered: () => finish(false),
    fails: (err: Error) => fail(err),
  };
}

describe('FirstAnswer: one call until the first answer', () => {
  it('runs the calls one at a time while none has been answered, in the order they came', async () => {
    const first = new FirstAnswer();
    const log: string[] = [];
    const [a, b, c] = ['a', 'b', 'c'].map((n) => call(first, n, log));
    await flush();
    expect(log).toEqual(['a starts']);
    a!.unanswered(); // a wrong URL: no HTTP answer, retries spent
    expect(await a!.result).toBe('a');
    await flush();
    expect(log).toEqual(['a starts', 'b starts']);
    expect(c!.state.started).toBe(false);
    b!.unanswered();
    await b!.result;
    await flush();
    expect(log).toEqual(['a starts', 'b starts', 'c starts']);
    c!.unanswered();
    await c!.result;
  });

  it('once a call has been answered, every waiting call starts at once', async () => {
    const first = new FirstAnswer();
    const log: string[] = [];
    const calls = ['probe', 'b', 'c', 'd'].map((n) => call(first, n, log));
    await flush();
    expect(log).toEqual(['probe starts']);
    calls[0]!.answered();
    await calls[0]!.result;
    await flush();
    expect(log.sort()).toEqual(['b starts', 'c starts', 'd starts', 'probe starts']);
    for (const c of calls.slice(1)) c.answered();
    expect(await Promise.all(calls.map((c) => c.result))).toEqual(['probe', 'b', 'c', 'd']);
  });

  it('a call that fails before any answer passes its error on and lets the next one try, still alone', async () => {
    const first = new FirstAnswer();
    const log: string[] = [];
    const [a, b, c] = ['a', 'b', 'c'].map((n) => call(first, n, log));
    await flush();
    a!.fails(new Error('ECONNREFUSED'));
    await expect(a!.result).rejects.toThrow('ECONNREFUSED');
    await flush();
    expect(log).toEqual(['a starts', 'b starts']);
    b!.answered();
    await b!.result;
    await flush();
    expect(c!.state.started).toBe(true);
    c!.answered();
    await c!.result;
  });

  it('after the first answer, a new call starts at once beside those in flight', async () => {
    const first = new FirstAnswer();
    first.reached = true;
    const log: string[] = [];
    const [a, b] = ['a', 'b'].map((n) => call(first, n, log));
    await flush();
    expect(log).toEqual(['a starts', 'b starts']);
    a!.answered();
    b!.answered();
    await Promise.all([a!.result, b!.result]);
  });
});
