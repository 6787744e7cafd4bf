import { EXIT } from '../../errors.js';
import type { Io } from '../io.js';
import type { CompletionPlan } from './plan.js';
import { bashCompletion, fishCompletion, zshCompletion } from './scripts.js';

const SCRIPTS = { bash: bashCompletion, zsh: zshCompletion, fish: fishCompletion } as const;

/** Prints a completion script built from the CLI's own command table. */
export async function run(plan: CompletionPlan, io: Io): Promise<number> {
  io.stdout.write(SCRIPTS[plan.shell](plan.program));
  return EXIT.ok;
}
