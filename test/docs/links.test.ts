import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module script, without types
import { anchor } from '../../scripts/gen-cli-docs.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const pages = [
  'README.md',
  'ARCHITECTURE.md',
  'fixtures/README.md',
  'src/serve/README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The anchors of a page's headings, as GitHub makes them (a repeated heading gets -1, -2, ...). */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading] of withoutCode(text).matchAll(/^#{1,6} (.+)$/gm)) {
    const a = anchor(heading!.trim());
    const n = seen.get(a) ?? 0;
    seen.set(a, n + 1);
    out.add(n === 0 ? a : `${a}-${n}`);
  }
  return out;
}

const withoutCode = (text: string): string => text.replace(/^```[\s\S]*?^```/gm, '');

/**
 * Links between the pages lead somewhere: to a file that exists and, with a
 * #fragment, to a heading of that page. Moving a section breaks its links here
 * first, not for a reader.
 */
describe('links in the docs', () => {
  it.each(pages)('%s links to files and headings that exist', (page) => {
    const text = readFileSync(join(root, page), 'utf8');
    const broken: string[] = [];
    for (const [, link] of withoutCode(text).matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = link!;
      if (/^[a-z]+:/.test(target)) continue; // http:, mailto:
      const [path, fragment] = target.split('#') as [string, string | undefined];
      const file = path === '' ? join(root, page) : join(root, dirname(page), path);
      if (!existsSync(file)) {
        broken.push(`${target} (no file ${relative(root, file)})`);
        continue;
      }
      if (fragment !== undefined && file.endsWith('.md') && !anchors(readFileSync(file, 'utf8')).has(fragment)) {
        broken.push(`${target} (no heading #${fragment} in ${relative(root, file)})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('no page links to a repository address the project does not have', () => {
    // until the project has a public home, its pages link to each other relatively
    const absolute = pages.filter((page) => /github\.com\/mailsift\//.test(readFileSync(join(root, page), 'utf8')));
    expect(absolute).toEqual([]);
  });
});

/** every file and folder of the repository, as paths from its root */
function repoPaths(dir = root, base = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (['node_modules', 'dist', '.git', 'coverage'].includes(e.name) || e.name.startsWith('.')) return [];
    const path = base ? `${base}/${e.name}` : e.name;
    return e.isDirectory() ? [`${path}/`, ...repoPaths(join(dir, e.name), path)] : [path];
  });
}

/**
 * A source path a page names in code spans (`src/cli/main.ts`, `checker.ts`,
 * `engines/api/`) is one that exists: a file moved or split leaves its old
 * name in the docs only until this test runs. A name may be short (a table
 * row about `src/read/` names `open-input.ts`): it must then be the end of a
 * path that exists.
 */
describe('paths named in the docs', () => {
  const SOURCE = /^(?:(?:src|test|bench|docs|fixtures|scripts|bin)\/[\w./-]*|\w[\w./-]*\.(?:ts|mts|mjs|js))$/;
  const all = repoPaths();
  const exists = (name: string): boolean => all.some((p) => p === name || p.endsWith(`/${name}`));
  it.each(pages)('%s names files that exist', (page) => {
    const text = readFileSync(join(root, page), 'utf8');
    const missing: string[] = [];
    for (const [, span] of text.matchAll(/`([^`\n]+)`/g)) {
      const name = span!.trim().replace(/:\d+(?:[-,]\d+)*$/, ''); // file.ts:42
      if (!SOURCE.test(name) || name.includes('..') || name.startsWith('dist/')) continue;
      if (!exists(name)) missing.push(name);
    }
    expect([...new Set(missing)], `${page} names files that are not there`).toEqual([]);
  });
});

/**
 * A page that describes a folder file by file names every file in it: a file
 * added to engines/api/ without a line in docs/api-engine.md is a file a
 * newcomer cannot place.
 */
describe('pages that list a folder', () => {
  const LISTS: [page: string, folder: string][] = [
    ['docs/api-engine.md', 'src/engines/api'],
    ['docs/offline-engine.md', 'src/engines/local/smtp'],
    ['src/serve/README.md', 'src/serve'],
  ];
  it.each(LISTS)('%s names every file of %s', (page, folder) => {
    const text = readFileSync(join(root, page), 'utf8');
    const named = new Set([...text.matchAll(/`([^`\n]+)`/g)].map(([, span]) => span!.split('/').pop()!));
    const files = readdirSync(join(root, folder)).filter((f) => f.endsWith('.ts'));
    expect(
      files.filter((f) => !named.has(f)),
      `${page} does not name these files of ${folder}`,
    ).toEqual([]);
  });
});
