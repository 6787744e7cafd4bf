import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module script, without types
import { anchor } from '../../scripts/gen-cli-docs.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const pages = ['README.md', 'ARCHITECTURE.md', 'fixtures/README.md', 'src/serve/README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

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

/** package.json's repository, as the README's absolute links name its files */
const REPOSITORY = /^https:\/\/(?:github\.com\/mailsift\/mailsift\/blob\/main|raw\.githubusercontent\.com\/mailsift\/mailsift\/main)\/(.+)$/;

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
      // the README links to the repository absolutely (it is also the package's page on the registry)
      const inRepo = REPOSITORY.exec(link!);
      const target = inRepo ? inRepo[1]! : link!;
      if (!inRepo && /^[a-z]+:/.test(target)) continue; // other http:, mailto:
      const [path, fragment] = target.split('#') as [string, string | undefined];
      const file = path === '' ? join(root, page) : inRepo ? join(root, path) : join(root, dirname(page), path);
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

  it('README.md, also the package page on the registry, links to the repository absolutely', () => {
    const text = withoutCode(readFileSync(join(root, 'README.md'), 'utf8'));
    const relativeLinks = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z]+:/.test(t) && !t.startsWith('#'));
    expect(relativeLinks).toEqual([]);
  });
});
