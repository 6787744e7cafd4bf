import type { Command } from 'commander';

/**
 * Examples shown first in each command's --help (clig.dev: people read the
 * examples before the option list). Kept here so README and help agree.
 */
export const EXAMPLES: Record<'program' | 'validate' | 'check' | 'serve', string> = {
  program: `Examples:
  $ npx mailsift validate contacts.csv -o cleaned.csv
  $ mailsift check someone@example.com
  $ mailsift serve --port 8080
Run "mailsift <command> --help" for a command's examples and options.
`,
  validate: `Examples:
  $ mailsift validate contacts.csv -o cleaned.csv          # every row, with a verdict
  $ mailsift validate contacts.csv --only valid,risky -o keep.csv
  $ cut -d, -f3 users.csv | mailsift validate --only valid > good.txt
  $ mailsift validate signups.csv --journal signups.journal --cache ~/.mailsift-cache \\
      --fail-on 'invalid>5%,errors>0' -o checked.csv      # cron: quote the rule
  $ mailsift validate contacts.csv --dry-run               # what would be sent, and how long
  $ mailsift validate list.txt --format ndjson | jq -r 'select(.status=="valid").email'
The API key comes from MAILSIFT_API_KEY or --api-key-file, never from a flag.
`,
  check: `Examples:
  $ mailsift check someone@example.com
  $ mailsift check someone@gmial.com --json | jq .details.suggestion
`,
  serve: `Examples:
  $ mailsift serve                                 # 127.0.0.1:8080, prints a random key once
  $ mailsift serve --keys-file keys.txt --rate-limit 600/60 --shape b
  $ MAILSIFT_BASE_URL=http://127.0.0.1:8080 MAILSIFT_API_KEY=... mailsift validate list.csv
`,
};

/** Puts the examples above the usage line of `cmd`'s help. */
export function withExamples<C extends Command>(cmd: C, which: keyof typeof EXAMPLES): C {
  cmd.addHelpText('before', EXAMPLES[which]);
  return cmd;
}
