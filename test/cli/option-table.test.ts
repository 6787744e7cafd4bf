import { Command, Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { addOptions, spec } from '../../src/cli/option-table.js';
import { checkCommand } from '../../src/cli/check-command.js';
import { SERVE_OPTIONS, serveCommand } from '../../src/cli/serve-command.js';
import { SMTP_DEADLINE_OPTION, SMTP_OPTIONS } from '../../src/cli/smtp-flags.js';
import { validateCommand } from '../../src/cli/validate-command.js';

describe('options declared once, as tables', () => {
  it('refuses a table key that is not where commander stores the value (it would stay undefined)', () => {
    const table = { noProgress: spec<boolean>(() => new Option('--no-progress', 'x')) };
    expect(() => addOptions(new Command('x'), table)).toThrow(/--no-progress is stored as progress, not noProgress/);
  });

  it('gives validate and check the same shared and --smtp options, with the same help and defaults', () => {
    const shown = (cmd: Command) => new Map(cmd.options.map((o) => [o.long, `${o.description}|${String(o.defaultValue)}`]));
    const validate = shown(validateCommand(async () => {}));
    const check = shown(checkCommand());
    const shared = ['--engine', '--base-url', '--api-key-file', '--timeout', '--retries', '--verbose', '--dns-server', '--dns-timeout', '--smtp', '--smtp-port', '--smtp-per-host'];
    for (const flag of shared) {
      expect(validate.get(flag), flag).toBeDefined();
      expect(check.get(flag), flag).toBe(validate.get(flag));
    }
    // serve takes the --smtp ones too, and its own --smtp-deadline
    const serve = shown(serveCommand(async () => {}));
    expect(serve.get('--smtp-per-host')).toBe(validate.get('--smtp-per-host'));
    expect(serve.has('--smtp-deadline')).toBe(true);
    expect(validate.has('--smtp-deadline')).toBe(false);
  });

  it('serve --help lists every option of its tables, in table order, and nothing else', () => {
    const help = serveCommand(async () => {}).helpInformation();
    const listed = help.match(/^ {2}(?:-\w, )?--[\w-]+/gm)!.map((l) => l.trim().replace(/^-\w, /, ''));
    const declared = [SERVE_OPTIONS, SMTP_OPTIONS, SMTP_DEADLINE_OPTION].flatMap((t) => Object.values(t).map((s) => s.make().long));
    expect(listed).toEqual([...declared, '--help']);
    expect(listed.length).toBeGreaterThan(25);
  });
});
