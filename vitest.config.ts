import { defineConfig } from 'vitest/config';
import { LongestFirst } from './test/support/sequencer.js';

/**
 * Two kinds of test file, told apart by the name alone:
 *
 * - `*-e2e.test.ts` — anything that starts a process: the built binary
 *   (`test/support/run-cli.ts`, `test/serve/spawn.ts`), redis-server, tsc or a
 *   worker process. It runs against dist/ (`npm test` builds it first) and
 *   asserts only what a real process shows: exit codes, stdin/stdout/stderr,
 *   signals, files on disk, real servers. The global set-up bundles dist/
 *   first (about a second).
 * - every other `*.test.ts` — in-process: parsers, planners
 *   (`src/cli/<command>/plan.ts`: argv → plan or usage error), whole commands
 *   run by `main(argv, io)` against buffers (`test/support/run-in-process.ts`),
 *   the pipeline, engines against loopback servers started in the test itself.
 *   Fast.
 *
 * `npm test` runs both in one queue, `npm run test:unit` the second alone. A new test of a
 * flag or an error message belongs in-process (test/cli/plan.test.ts is the
 * table to extend); spawn the binary only for what only a process shows.
 */
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Most of an end-to-end file's time is waiting (a child starting, a server's
    // delay, a rate-limit window), not computing: more files than cores overlap it.
    // On 2 idle cores, longest first: 3 workers 74 s, 4 61 s, 5 63 s, 6 63 s (each
    // worker more imports src/ once more: 7.6 s of import summed at 3, 18.5 s at 6).
    maxWorkers: 4,
    // Tests marked concurrent in one file (those that wait for real rate-limit windows,
    // each against a server of its own) all wait at once: vitest's default is 5.
    maxConcurrency: 10,
    // longest first, end-to-end and in-process in one queue (see the sequencer)
    sequence: { sequencer: LongestFirst },
    // One module graph per worker, not per file: importing src/ afresh for each of fifty files
    // cost more CPU than the in-process tests themselves (unit: 21 s of CPU -> 10 s). Tests
    // that fake timers or add process listeners restore them in their own hooks.
    isolate: false,
    // The modules vite transformed (src/ and test/ from TypeScript), kept on disk between runs
    // (node_modules/.experimental-vitest-cache) and used again while a file is unchanged: three
    // in-process files took 4.6 s of CPU with every module transformed afresh, 3.3 s from the cache.
    experimental: { fsModuleCache: true },
    include: ['test/**/*.test.ts'],
    // the binary the e2e tests spawn runs the bundle: made afresh from src/ first
    globalSetup: ['test/support/bundle-setup.ts'],
  },
});
