import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module script, without types
import { EXIT_TABLE_PAGES, renderCliReference, renderExitTable, withExitTable } from '../../scripts/gen-cli-docs.mjs';
import { EXIT, EXIT_MEANINGS } from '../../src/errors.js';
import { createProgram } from '../../src/cli/main.js';

/**
 * docs/cli.md is generated from the commander definitions (npm run docs): the
 * committed file must be what the generator writes from the source as it is,
 * so a flag added, renamed or re-described without regenerating fails here.
 */
describe('docs/cli.md', () => {
  it('is what npm run docs writes from the commander definitions', () => {
    const committed = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');
    const generated: string = renderCliReference(createProgram('all'));
    if (committed !== generated) expect.fail('docs/cli.md is out of date: run npm run docs');
  });

  it('lists every command and every flag of --help', () => {
    const generated: string = renderCliReference(createProgram('all'));
    const all = (cmd: ReturnType<typeof createProgram>): ReturnType<typeof createProgram>[] => [cmd, ...cmd.commands.flatMap(all)];
    for (const cmd of all(createProgram())) {
      for (const option of cmd.options.filter((o) => !o.hidden)) expect(generated).toContain(`| \`${option.flags.replace(/\|/g, '\\|')}\` |`);
    }
    expect(generated).toContain('## mailsift keys revoke');
    expect(generated).not.toMatch(/\d{4}-\d{2}-\d{2}/); // no dates: the same source gives the same file
  });

  // issue 34.6: the exit codes were written by hand in four places, none from EXIT
  it.each(EXIT_TABLE_PAGES as string[])('%s lists the exit codes as npm run docs writes them from the table next to EXIT', (page) => {
    const committed = readFileSync(new URL(`../../${page}`, import.meta.url), 'utf8');
    if (withExitTable(committed, renderExitTable(EXIT_MEANINGS)) !== committed) expect.fail(`${page}: the exit codes are out of date: run npm run docs`);
    const codes = [...committed.matchAll(/^\| `(\d+)` \|/gm)].map((m) => Number(m[1]));
    expect(codes).toEqual(Object.values(EXIT));
  });
});
