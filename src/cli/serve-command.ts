import { Command } from 'commander';
import { UsageError } from '../errors.js';

// Placeholder until serve lands (issue 6).
export function serveCommand(): Command {
  return new Command('serve').description('serve the validation API from the offline engine').action(() => {
    throw new UsageError('serve is not implemented yet');
  });
}
