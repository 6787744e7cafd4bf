import { declare } from '../command.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** `mailsift completion bash|zsh|fish`: planned by ./plan.ts, run by ./run.ts. */
export const COMPLETION = declare({
  name: 'completion',
  description: 'print a shell completion script: bash, zsh or fish',
  args: [{ name: '<shell>', help: 'the shell', choices: SHELLS }],
  help: {
    examples: `
Load it in the current shell, or save it where your shell looks for completions:
  $ source <(mailsift completion bash)
  $ source <(mailsift completion zsh)
  $ mailsift completion fish | source
  $ mailsift completion bash \\
      > ~/.local/share/bash-completion/completions/mailsift`,
  },
});
