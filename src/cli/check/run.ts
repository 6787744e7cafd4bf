import { EXIT } from '../../errors.js';
import { formatVerdict } from '../../terminal/check-verdict.js';
import { say } from '../../terminal/say.js';
import type { Verdict } from '../../verdict.js';
import { apiSettings, localSettings } from '../engine-choice.js';
import type { Io } from '../io.js';
import { hideInArgv } from '../argv-secrets.js';
import type { CheckPlan } from './plan.js';

/** `mailsift check`: prints the verdict on stdout and returns the exit code. */
export async function run(plan: CheckPlan, io: Io): Promise<number> {
  const verdict = await check(plan, io, (line) => say(io.stderr, line));
  io.stdout.write(formatVerdict(verdict, { json: plan.json, tty: io.stdout.isTTY === true }));
  return verdict.error ? EXIT.rowErrors : EXIT.ok;
}

/** One verdict from whichever engine the plan names; notices and warnings go to `say`. */
async function check(plan: CheckPlan, io: Io, say: (line: string) => void): Promise<Verdict> {
  const { email } = plan;
  const choice = plan.engine;
  // Engines are loaded when used, not whenever the CLI starts.
  if (choice.engine === 'api') {
    const { validateOneViaApi } = await import('../../engines/api/client.js');
    return validateOneViaApi({ ...apiSettings(choice, plan.engineSettings, say), clock: io.clock, concurrency: 1 }, email);
  }
  if (choice.notice) say(choice.notice);
  for (const line of plan.warnings) say(line);
  hideInArgv(io, plan.argvSecret);
  const { createLocalValidator } = await import('../../engines/local/index.js');
  const engine = createLocalValidator({ ...localSettings(plan.engineSettings, plan.smtp, (line) => say(`warning: ${line}`)), clock: io.clock });
  try {
    const verdict = await engine.validateOne(email);
    // an empty smtp deserves a reason: the server's words, or why there were none
    const problem = (engine.stats() as { smtpProblem?: string }).smtpProblem;
    if (plan.smtp && verdict.details.syntax && verdict.details.smtp === undefined && problem) say(`mailbox check undetermined: ${problem}`);
    return verdict;
  } finally {
    await engine.close();
  }
}
