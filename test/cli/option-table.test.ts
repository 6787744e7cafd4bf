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
    const help = serveCommand(async () => {}, 'all').helpInformation();
    const listed = help.match(/^ {2}(?:-\w, )?--[\w-]+/gm)!.map((l) => l.trim().replace(/^-\w, /, ''));
    const declared = [SERVE_OPTIONS, SMTP_OPTIONS, SMTP_DEADLINE_OPTION].flatMap((t) => Object.values(t).map((s) => s.make().long));
    expect(listed).toEqual([...declared, '--help']);
    expect(listed.length).toBeGreaterThan(25);
  });
});

describe('each flag parsed once (issue 34.1)', () => {
  const commands = { validate: validateCommand(async () => {}), check: checkCommand(), serve: serveCommand(async () => {}) };
  /** a value that is a number, a duration or an address, told by the flag's value name */
  const TYPED = /<(n|ms|seconds|duration|n\|auto|host\[:port\]|address|requests\/seconds|url)>$/;
  const options = Object.entries(commands).flatMap(([name, cmd]) => cmd.options.map((o) => ({ command: name, option: o })));

  it('every number, duration and address option has a parser that hands over its typed value', () => {
    const typed = options.filter(({ option }) => TYPED.test(option.flags) && !['--base-url', '--smtp-proxy'].includes(option.long!));
    expect(typed.length).toBeGreaterThan(25);
    for (const { command, option } of typed) {
      expect(option.parseArg, `${command} ${option.flags}`).toBeTypeOf('function');
      // the default is the parsed value of the default --help shows: nothing parses it again later
      if (option.defaultValue !== undefined) {
        const shown = String(option.defaultValueDescription ?? option.defaultValue);
        expect(option.parseArg!(shown, undefined), `${command} ${option.flags} default ${shown}`).toEqual(option.defaultValue);
      }
    }
  });

  it('an option taken by several commands has the one parser, default and help in all of them', () => {
    const byFlag = new Map<string, typeof options>();
    for (const entry of options) byFlag.set(entry.option.long!, [...(byFlag.get(entry.option.long!) ?? []), entry]);
    const shared = [...byFlag.entries()].filter(([, list]) => list.length > 1);
    // --dns-timeout, --dns-server, --no-dns, the --smtp ones… in validate, check and serve
    expect(shared.map(([flag]) => flag)).toEqual(expect.arrayContaining(['--dns-timeout', '--dns-server', '--no-dns', '--smtp-port', '--smtp-timeout', '--timeout']));
    for (const [flag, [first, ...rest]] of shared) {
      for (const other of rest) {
        // commander makes a parser per Option for .choices(): compare the choices instead
        if (first!.option.argChoices) expect(other.option.argChoices, flag).toEqual(first!.option.argChoices);
        else expect(other.option.parseArg, `${flag}: ${first!.command} and ${other.command}`).toBe(first!.option.parseArg);
        expect(other.option.defaultValue, flag).toEqual(first!.option.defaultValue);
        expect(other.option.description, flag).toBe(first!.option.description);
      }
    }
    expect(byFlag.get('--dns-timeout')!.map((e) => e.command)).toEqual(['validate', 'check', 'serve']);
  });
});
