import type { Command } from 'commander';
import type { PlanInput } from '../command.js';
import type { Shell } from './options.js';

/** The script to print: for which shell, and the command tree it completes. */
export interface CompletionPlan {
  shell: Shell;
  program: Command;
}

export function plan({ args: [shell], program }: PlanInput<Record<string, never>>): CompletionPlan {
  return { shell: shell as Shell, program };
}
