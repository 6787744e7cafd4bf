// Writes test/durations.json from vitest's results cache of the last `npm test`:
// the order a fresh clone (CI) runs the suite in, longest file first
// (test/support/sequencer.ts). Run after a full `npm test` when files were
// added or their times moved a lot; an old snapshot only costs a worse order.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const base = 'node_modules/.vite/vitest';
const caches = readdirSync(base).map((d) => join(base, d, 'results.json'));
const durations = {};
for (const cache of caches) {
  // the suite is one project with no name now: its keys are ":file" (older caches also hold "e2e:file")
  for (const [key, result] of JSON.parse(readFileSync(cache, 'utf8')).results) {
    // a file renamed or removed since keeps its entry in the cache: not part of the suite
    if (key.startsWith(':') && existsSync(key.slice(1))) durations[key.slice(1)] = Math.round(result.duration);
  }
}
const sorted = Object.fromEntries(Object.entries(durations).sort(([a], [b]) => a.localeCompare(b)));
writeFileSync('test/durations.json', `${JSON.stringify(sorted, null, 2)}\n`);
console.log(`test/durations.json: ${Object.keys(sorted).length} files`);
