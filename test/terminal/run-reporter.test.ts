import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/errors.js';
import { newProgress } from '../../src/terminal/progress.js';
import { emptySummary, type Summary } from '../../src/summary.js';
import { parseFailOn } from '../../src/terminal/fail-on.js';
import { RunReporter } from '../../src/terminal/run-reporter.js';
import { ESC, FakeTty } from './fake-tty.js';
import { systemClock } from '../../src/time/clock.js';

const summary: Summary = { ...emptySummary('api'), total: 100, valid: 90, invalid: 10, written: 100, elapsedMs: 1000 };

async function finish(flags: object, over: Partial<Summary> = {}, failOn = 'invalid>5%', stream = new FakeTty(false)) {
  const reporter = new RunReporter(newProgress(0), { stderr: stream, env: {}, clock: systemClock }, { flags, failOn: parseFailOn(failOn), output: 'out.csv' });
  await reporter.start();
  const code = reporter.finish({ ...summary, ...over });
  return { code, text: stream.output };
}

describe('RunReporter', async () => {
  it('prints the summary and the rule that holds, and asks for exit 5', async () => {
    const { code, text } = await finish({});
    expect(code).toBe(EXIT.failOn);
    expect(text).toContain('  invalid   10   10.0%');
    expect(text).toContain('mailsift: --fail-on invalid>5% holds: invalid is 10.0% (10 of 100 rows)\n');
    expect(text).not.toMatch(ESC); // not a terminal
  });

  it('with --quiet prints only the rule that made it fail', async () => {
    expect(await finish({ quiet: true })).toEqual({
      code: EXIT.failOn,
      text: 'mailsift: --fail-on invalid>5% holds: invalid is 10.0% (10 of 100 rows)\n',
    });
    expect(await finish({ quiet: true }, { invalid: 1, valid: 99 })).toEqual({ code: EXIT.ok, text: '' });
  });

  it('rows without a verdict outrank a rule: exit 4', async () => {
    expect((await finish({ quiet: true }, { errors: 2 })).code).toBe(EXIT.rowErrors);
  });

  it("the run's own DNS or SMTP failing is exit 4, said even with --quiet (issue 31.1)", async () => {
    const { code, text } = await finish({ quiet: true }, { valid: 40, unknown: 60, invalid: 0, outage: { dns: 45, smtp: 1 } });
    expect(code).toBe(EXIT.rowErrors);
    expect(text.split('\n').filter(Boolean)).toEqual([
      expect.stringMatching(
        /^mailsift: DNS failed: the resolver answered nothing usable, so 45 rows could not be checked .*re-run with the same --journal checks them again$/,
      ),
      expect.stringMatching(/^mailsift: the mailbox check failed: .*port 25.*, so 1 row could not be checked; they were not recorded as final/),
    ]);
  });

  it('on a terminal, animates and then leaves only the summary in colour', async () => {
    const tty = new FakeTty(true);
    const { text } = await finish({}, {}, 'errors>0', tty);
    expect(tty.text).toContain('0 rows read');
    expect(text).toContain('\x1b[32mvalid');
  });
});
