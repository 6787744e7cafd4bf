// Issue 31.9: help that fits an 80×24 terminal, the whole reference one word
// away (--help all), and issue 34.6: the exit codes of the help texts come from
// the one table next to EXIT.
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { EXIT, EXIT_MEANINGS } from '../../src/errors.js';
import { createProgram } from '../../src/cli/main.js';
import { helpDepth } from '../../src/cli/help.js';
import { planValidate } from '../../src/cli/validate/plan.js';

const all = (cmd: Command): Command[] => [cmd, ...cmd.commands.flatMap(all)];
/** what `--help` prints, the texts added before and after included */
function shown(cmd: Command): string {
  let out = '';
  cmd.configureOutput({ writeOut: (s) => (out += s), getOutHelpWidth: () => 80 });
  cmd.outputHelp();
  return out;
}
const name = (cmd: Command): string => (cmd.parent ? `${name(cmd.parent)} ${cmd.name()}` : cmd.name());

describe('help', () => {
  it.each(['short', 'all'] as const)("every line of every command's --help%s fits 80 columns", (depth) => {
    for (const cmd of all(createProgram(depth))) {
      for (const line of shown(cmd).split('\n')) expect(line.length, `${name(cmd)}: ${line}`).toBeLessThanOrEqual(80);
    }
  });

  it('the short help of every command fits a 24-line screen, and says where the rest is', () => {
    for (const cmd of all(createProgram())) {
      const text = shown(cmd).trimEnd();
      expect(text.split('\n').length, `${name(cmd)}:\n${text}`).toBeLessThanOrEqual(24);
    }
    for (const cmd of ['validate', 'check', 'serve']) {
      expect(shown(createProgram().commands.find((c) => c.name() === cmd)!)).toMatch(new RegExp(`: mailsift ${cmd} --help all, or docs/cli\\.md\\n$`));
    }
  });

  it('the short help lists only flags the command has; --help all lists every one', () => {
    const short = createProgram();
    const whole = createProgram('all');
    for (const cmd of ['validate', 'check', 'serve']) {
      const s = short.commands.find((c) => c.name() === cmd)!;
      const listed = shown(s)
        .match(/^ {2}(?:-\w, )?--[\w-]+/gm)!
        .map((l) => l.trim().replace(/^-\w, /, ''));
      const longs = new Set([...s.options.map((o) => o.long), '--help']);
      for (const flag of listed) expect(longs.has(flag), `${cmd} ${flag}`).toBe(true);
      expect(listed.length).toBeGreaterThan(4);
      const w = shown(whole.commands.find((c) => c.name() === cmd)!);
      for (const o of s.options.filter((o) => !o.hidden)) expect(w, `${cmd} --help all: ${o.long}`).toContain(o.long);
    }
  });

  it('--help all shows every exit code from the table next to EXIT, in order', () => {
    const validate = shown(createProgram('all').commands.find((c) => c.name() === 'validate')!);
    const block = validate.slice(validate.indexOf('Exit status:'));
    const codes = [...block.matchAll(/^ {2}(\d+) +/gm)].map((m) => Number(m[1]));
    expect(codes).toEqual(Object.values(EXIT));
    for (const row of EXIT_MEANINGS) expect(block.replace(/\s+/g, ' ')).toContain(`${row.code} ${row.help}`.replace(/^(\d+) /, (_m, c: string) => `${c} `));
    const check = shown(createProgram('all').commands.find((c) => c.name() === 'check')!);
    expect([...check.slice(check.indexOf('Exit status:')).matchAll(/^ {2}(\d+) +/gm)].map((m) => Number(m[1]))).toEqual(
      EXIT_MEANINGS.filter((r) => r.check !== undefined).map((r) => r.code),
    );
  });

  it('"--help all" is read from the words after the command; planning shows the same texts', async () => {
    expect(helpDepth(['validate', '--help', 'all'])).toBe('all');
    expect(helpDepth(['validate', '-h', 'all'])).toBe('all');
    expect(helpDepth(['validate', '--help'])).toBe('short');
    expect(helpDepth(['validate', 'all', '--help'])).toBe('short');
    const whole = await planValidate(['--help', 'all'], { env: {}, stdinIsTTY: false, stdoutIsTTY: false });
    if (!('shown' in whole)) throw new Error('expected help');
    for (const text of ['Exit status:', 'Output columns', 'metrics: valid, invalid', 'MAILSIFT_BASE_URL', '--smtp-per-host'])
      expect(whole.shown).toContain(text);
  });
});
