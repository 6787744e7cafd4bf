import { Argument, Command } from 'commander';
import { bashCompletion, fishCompletion, zshCompletion } from './completion.js';

const SHELLS = { bash: bashCompletion, zsh: zshCompletion, fish: fishCompletion } as const;

/** `mailsift completion bash|zsh|fish`: prints a completion script built from the CLI's own command table. */
export function completionCommand(program: Command): Command {
  return new Command('completion')
    .description('print a shell completion script: bash, zsh or fish')
    .addArgument(new Argument('<shell>', 'the shell').choices(Object.keys(SHELLS)))
    .addHelpText(
      'after',
      `
Load it in the current shell, or save it where your shell looks for completions:
  $ source <(mailsift completion bash)
  $ source <(mailsift completion zsh)
  $ mailsift completion fish | source
  $ mailsift completion bash \\
      > ~/.local/share/bash-completion/completions/mailsift`,
    )
    .action((shell: keyof typeof SHELLS) => {
      process.stdout.write(SHELLS[shell](program));
    });
}
