import type { PlanInput } from '../command.js';
import type { LoginFlags } from './options.js';

/** What `login` or `logout` will do (where the key is kept follows from the environment: credentials.ts). */
export type LoginPlan = { action: 'login'; force: boolean } | { action: 'logout' };

export function plan({ command, flags }: PlanInput<LoginFlags>): LoginPlan {
  return command === 'logout' ? { action: 'logout' } : { action: 'login', force: flags.force === true };
}
