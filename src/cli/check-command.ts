import { Command } from 'commander';
import { UsageError } from '../errors.js';

// Placeholder until the offline engine lands (issue 5).
export function checkCommand(): Command {
  return new Command('check')
    .description('validate one address')
    .argument('<email>')
    .action(() => {
      throw new UsageError('check is not implemented yet');
    });
}
