import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The suite's files, longest first, whatever they do. A file that spawns the
 * binary mostly waits (a child starting, a rate-limit window, a Postfix lab),
 * an in-process file mostly computes: in one queue the workers overlap the
 * two, where vitest's own order ran every end-to-end file before the first
 * in-process one and left the cores idle half the time (2 idle cores: 87 s
 * in two projects, 77 s in one queue longest first).
 *
 * The durations are vitest's own from the last run on this machine; a fresh
 * clone (CI) has none and takes them from test/durations.json, a snapshot of
 * that cache (`npm run test:durations` writes it again). A file in neither
 * goes first, as vitest puts a new file.
 */
export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    let snapshot: Record<string, number> = {};
    try {
      snapshot = JSON.parse(readFileSync(`${root}/test/durations.json`, 'utf8')) as Record<string, number>;
    } catch {
      // no snapshot: vitest's cache or the file's place in the list
    }
    const duration = (spec: TestSpecification) => {
      const file = relative(root, spec.moduleId);
      return this.ctx.cache.getFileTestResults(`${spec.project.name}:${file}`)?.duration ?? snapshot[file] ?? Number.POSITIVE_INFINITY;
    };
    return [...files].sort((a, b) => duration(b) - duration(a));
  }
}
