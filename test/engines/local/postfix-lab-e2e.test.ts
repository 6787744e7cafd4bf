import { afterAll, beforeAll, describe } from 'vitest';
import { labFor, postfixMissing, startPostfixLab, type PostfixLab } from '../../support/postfix.js';
import { missingTool } from '../../support/tools.js';
import { LAB_CASES_LAB, labCases } from './smtp-lab.cases.js';
import { POSTFIX_CASES_LAB, postfixCases } from './smtp-postfix.cases.js';

// The mailbox check against a real Postfix and postgrey on loopback
// (test/support/postfix.ts): two sets of cases, smtp-postfix.cases.ts (a dirty
// list, the hosts' limits, how replies are read) and smtp-lab.cases.ts (a mixed
// list against Postfix and Exim as providers configure them), in ONE lab
// started once. The lab binds fixed addresses, so two files each starting one
// took turns: the second's worker sat blocked for the first's whole run, and
// each start cost its own seconds (measured: see the commit that merged them).
// The sets run one after the other, each reading the log from its own start.
// Needs root; skipped with a notice otherwise (under CI=true: fails).

const skipped = missingTool('the real-Postfix lab', postfixMissing());

let lab: PostfixLab;

describe.skipIf(skipped)('one real-Postfix lab for both sets of cases', () => {
  beforeAll(async () => {
    lab = await startPostfixLab(labFor(POSTFIX_CASES_LAB, LAB_CASES_LAB));
  }, 60_000);
  afterAll(async () => {
    await lab?.stop();
  }, 60_000);

  postfixCases(() => lab);
  labCases(() => lab);
});
