/**
 * Examples shown first in `mailsift --help` (clig.dev: people read examples
 * before the option list). Each command keeps its own examples next to its
 * options; the README's recipes repeat these.
 */
export const PROGRAM_EXAMPLES = `
Examples:
  $ npx mailsift validate contacts.csv -o cleaned.csv
  $ mailsift validate users.csv --only valid --format txt > good.txt
  $ mailsift validate signups.csv --journal signups.journal --fail-on 'invalid>5%' -o checked.csv
  $ mailsift check someone@example.com
  $ mailsift serve --port 8080
  $ source <(mailsift completion bash)                # also zsh, fish
Run "mailsift <command> --help" for a command's examples and options.
`;
