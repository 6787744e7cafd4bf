import { Command } from 'commander';
import { UsageError } from '../errors.js';

export function validateCommand(): Command {
  return new Command('validate')
    .argument('[input]')
    .action(() => {
      throw new UsageError('validate is not implemented yet');
    });
}
