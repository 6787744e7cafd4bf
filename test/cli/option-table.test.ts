import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { toCommand } from '../../src/cli/command.js';
import { addOptions, option, readFlags } from '../../src/cli/option-record.js';
import { CHECK } from '../../src/cli/check/options.js';
import { SERVE, SERVE_OPTIONS } from '../../src/cli/serve/options.js';
import { SMTP_DEADLINE_OPTION, SMTP_OPTIONS } from '../../src/cli/smtp-options.js';
import { VALIDATE } from '../../src/cli/validate/options.js';

describe('options declared once, as records', () => {
  it('refuses a table key that is not where commander stores the value (it would stay undefined)', () => {
    const table = { noProgress: option<boolean>({ flags: '--no-progress', help: 'x' }) };
    expect(() => addOptions(new Command('x'), table)).toThrow(/--no-progress is stored as progress, not noProgress/);
  });

  it('gives validate and check the same shared and --smtp options, with the same help and defaults', () => {
    const shown = (cmd: Command) => new Map(cmd.options.map((o) => [o.long, `${o.description}|${String(o.defaultValue)}`]));
    const validate = shown(toCommand(VALIDATE));
    const check = shown(toCommand(CHECK));
    const shared = [
      '--engine',
      '--base-url',
      '--api-key-file',
      '--timeout',
      '--retries',
      '--verbose',
      '--dns-server',
      '--dns-timeout',
      '--smtp',
      '--smtp-port',
      '--smtp-per-host',
    ];
    for (const flag of shared) {
      expect(validate.get(flag), flag).toBeDefined();
      expect(check.get(flag), flag).toBe(validate.get(flag));
    }
    // serve takes the --smtp ones too, and its own --smtp-deadline
    const serve = shown(toCommand(SERVE));
    expect(serve.get('--smtp-per-host')).toBe(validate.get('--smtp-per-host'));
    expect(serve.has('--smtp-deadline')).toBe(true);
    expect(validate.has('--smtp-deadline')).toBe(false);
  });

  it('serve --help lists every option of its tables, in table order, and nothing else', () => {
    const help = toCommand(SERVE, 'all').helpInformation();
    const listed = help.match(/^ {2}(?:-\w, )?--[\w-]+/gm)!.map((l) => l.trim().replace(/^-\w, /, ''));
    const declared = [SERVE_OPTIONS, SMTP_OPTIONS, SMTP_DEADLINE_OPTION].flatMap((t) =>
      Object.values(t).map((r) => r.flags.replace(/^-\w, /, '').split(' ')[0]),
    );
    expect(listed).toEqual([...declared, '--help']);
    expect(listed.length).toBeGreaterThan(25);
  });

  it("a variable stands in for a flag not typed (flag > environment > default), parsed by the flag's parser", () => {
    const table = {
      port: option<number>({ flags: '--port <n>', help: 'x', parse: Number, default: 80, env: 'X_PORT' }),
      name: option<string | undefined>({ flags: '--name <s>', help: 'x', env: 'X_NAME' }),
    };
    const parsed = (argv: string[], env: Record<string, string>) => {
      const cmd = addOptions(new Command('x'), table).action(() => {});
      cmd.parse(argv, { from: 'user' });
      return readFlags(cmd, table, env);
    };
    expect(parsed([], {})).toEqual({ flags: { port: 80, name: undefined }, given: {} });
    expect(parsed([], { X_PORT: '81', X_NAME: 'env' })).toEqual({ flags: { port: 81, name: 'env' }, given: { port: 'env', name: 'env' } });
    expect(parsed(['--port', '82'], { X_PORT: '81' })).toEqual({ flags: { port: 82, name: undefined }, given: { port: 'flag' } });
    // an empty variable counts as unset
    expect(parsed([], { X_NAME: '' })).toEqual({ flags: { port: 80, name: undefined }, given: {} });
    // and --help all names the variable
    expect(addOptions(new Command('x'), table).helpInformation()).toContain('(env: X_PORT)');
  });
});

describe('each flag parsed once (issue 34.1)', () => {
  const commands = { validate: toCommand(VALIDATE), check: toCommand(CHECK), serve: toCommand(SERVE) };
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
    expect(shared.map(([flag]) => flag)).toEqual(
      expect.arrayContaining(['--dns-timeout', '--dns-server', '--no-dns', '--smtp-port', '--smtp-timeout', '--timeout']),
    );
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
