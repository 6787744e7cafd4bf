import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The import graph of src/ keeps the shape ARCHITECTURE.md draws: each top-level
 * folder (or root module) sits on a layer, and an import points only to a lower
 * layer or stays inside its own folder. A circle between files, even a type-only
 * one, fails too. A new folder must be given a layer here before it is used.
 */
const LAYERS: Record<string, number> = {
  // what every layer shares: the verdict, the summary, the error types
  verdict: 0,
  // the one clock (real or a test's fake) and the waits on it
  time: 0,
  summary: 0,
  errors: 0,
  version: 0,
  // numbers and durations as people read them: the terminal and the HTML report
  format: 0,
  // checks of a library caller's numbers
  'check-options': 0,
  // how a delimited text is written (delimiter, line ending, encoding, BOM), which read/ tells and write/ follows
  dialect: 0,
  // the file-system toolkit: which process owns a file left on disk, the one atomic replace,
  // the temp registry and the sweep of dead runs' leftovers, the words of each errno
  fs: 0.5,
  // the one address key, the one encoding of a verdict; the reason a verdict gives
  codec: 1,
  reason: 1,
  // the one Redis client (ioredis loaded on first use) and its URLs, for the stores and serve
  redis: 1,
  // deduplication: every address of a run in a compact memo, which the journal
  // resumes into (stores/) and the pipeline asks
  dedupe: 1.5,
  // the stages' parts: readers, writers, engines, the journal and caches
  read: 2,
  write: 2,
  engines: 2,
  stores: 2,
  report: 2,
  // the core: the pipeline that runs the stages in order
  pipeline: 4,
  // the edges beside the CLI: the terminal, the API server
  terminal: 5,
  serve: 5,
  // the front doors: the library's entry points and the command line
  library: 6,
  cli: 6,
  index: 7,
};

const src = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

// static and dynamic imports, `export … from`, type-only ones included
const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

function graph(): Map<string, string[]> {
  const g = new Map<string, string[]>();
  for (const file of sources(src)) {
    const from = relative(src, file);
    const text = readFileSync(file, 'utf8');
    const to: string[] = [];
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2]!;
      to.push(normalize(join(dirname(from), spec)).replace(/\.js$/, '.ts'));
    }
    g.set(from, to);
  }
  return g;
}

const folderOf = (file: string): string => file.split('/')[0]!.replace(/\.ts$/, '');

describe('the import graph of src/', () => {
  const g = graph();

  it('gives every folder and root module a layer', () => {
    const unplaced = [...new Set([...g.keys()].map(folderOf))].filter((f) => !(f in LAYERS));
    expect(unplaced, 'give these a layer in test/architecture/imports.test.ts').toEqual([]);
  });

  it('points only downward, or within a folder', () => {
    const upward: string[] = [];
    for (const [from, tos] of g) {
      for (const to of tos) {
        const a = folderOf(from);
        const b = folderOf(to);
        if (a !== b && !(LAYERS[b]! < LAYERS[a]!)) upward.push(`${from} -> ${to}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('keeps the rooms of a folder apart: the two engines never import each other, and the shared interface neither', () => {
    // engines/api/ and engines/local/ meet only in what engines/ holds at its root (the Validator interface,
    // the failure type); those root files import neither engine. Likewise each command's folder of cli/
    // (validate/, check/, serve/, …) imports only what cli/ shares at its root, and only cli/main.ts, which
    // wires the commands, names their folders.
    const WIRES = new Set(['cli/main.ts']);
    const roomOf = (file: string): string | undefined => {
      const parts = file.split('/');
      return parts.length > 2 ? parts[1] : undefined;
    };
    const crossing: string[] = [];
    for (const [from, tos] of g) {
      for (const to of tos) {
        if (folderOf(from) !== folderOf(to)) continue;
        const a = roomOf(from);
        const b = roomOf(to);
        if (b !== undefined && a !== b && !(a === undefined && WIRES.has(from))) crossing.push(`${from} -> ${to}`);
      }
    }
    expect(crossing).toEqual([]);
    // the rule has something to hold: both engines exist and import the shared interface
    expect([...g.keys()].some((f) => f.startsWith('engines/api/'))).toBe(true);
    expect([...g.keys()].some((f) => f.startsWith('engines/local/'))).toBe(true);
    for (const room of ['validate', 'check', 'serve', 'keys', 'login', 'completion']) {
      for (const part of ['options', 'plan', 'run']) expect(g.has(`cli/${room}/${part}.ts`), `cli/${room}/${part}.ts`).toBe(true);
    }
  });

  it('has no circle', () => {
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const path: string[] = [];
    const visit = (f: string): void => {
      state.set(f, 'open');
      path.push(f);
      for (const t of g.get(f) ?? []) {
        if (state.get(t) === 'open') circles.push([...path.slice(path.indexOf(t)), t].join(' -> '));
        else if (!state.has(t)) visit(t);
      }
      path.pop();
      state.set(f, 'done');
    };
    for (const f of g.keys()) if (!state.has(f)) visit(f);
    expect(circles).toEqual([]);
  });

  it('finds the imports it checks (the pattern still matches the code)', () => {
    expect(g.get('cli/main.ts')?.length ?? 0).toBeGreaterThan(3);
    expect([...g.values()].flat()).toContain('pipeline/validate-stream.ts');
  });
});
