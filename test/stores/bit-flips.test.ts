import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { runInProcess } from '../support/run-in-process.js';
import { API_KEY, apiEnv, seeded } from './helpers.js';

// Records that cannot lie: a single bit flipped anywhere in a record of the
// journal or the cache (a disk, a copy, a hand) makes that record damaged — its
// address asked again, the damage said on stderr — never another verdict with
// exit 0. Without a checksum, flips in the status and flag letters decoded
// into other verdicts.

let dir: string;
let server: FaultServer;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mailsift-flips-'));
  server = await startFaultServer({ apiKey: API_KEY });
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

const ADDRESSES = [
  'ann@example.com',
  'invalid.bob@example.com',
  'risky.cy@example.org',
  'dee@example.net',
  'invalid.eve@example.com',
  'fay@example.org',
  'risky.gus@example.com',
  'hal@example.net',
  'ivy@example.com',
  'risky.jo@example.org',
];

describe('single-bit flips in a journal and a cache', () => {
  it.each([
    ['--journal', 'run.journal'],
    ['--cache', 'verdicts.cache'],
  ])(
    '%s: every flip in a record leaves the output as it was, and says so on stderr',
    async (flag, file) => {
      await writeFile(join(dir, 'list.txt'), ADDRESSES.join('\n') + '\n');
      const store = join(dir, file);
      await rm(store, { force: true });
      const first = await runInProcess(['validate', 'list.txt', flag, file], { cwd: dir, env: apiEnv(server) });
      expect(first.code, first.stderr).toBe(0);
      const pristine = await readFile(store);
      const recordsFrom = pristine.indexOf(0x0a) + 1;
      const random = seeded(flag === '--journal' ? 40 : 5);
      const before = server.requests.length;
      const unsaid: string[] = [];
      for (let n = 0; n < 12; n++) {
        // any byte of the records but the file's last newline (without it the last line is a torn write, cut off quietly)
        const at = recordsFrom + Math.floor(random() * (pristine.length - 1 - recordsFrom));
        const flipped = Buffer.from(pristine);
        flipped[at]! ^= 1 << Math.floor(random() * 8);
        await writeFile(store, flipped);
        const run = await runInProcess(['validate', 'list.txt', flag, file, '-q'], { cwd: dir, env: apiEnv(server) });
        const what = `flip of byte ${at} (${JSON.stringify(String.fromCharCode(pristine[at]!))})`;
        expect(run.code, `${what}: ${run.stderr}`).toBe(0);
        expect(run.stdout, what).toBe(first.stdout);
        const said = new RegExp(
          `^mailsift: ${flag} ${file}: 1 damaged record \\(failing the checksum or the format\\) ignored: its address is asked again$`,
          'm',
        );
        if (!said.test(run.stderr)) unsaid.push(`${what}: ${JSON.stringify(run.stderr)}`);
      }
      expect(unsaid).toEqual([]);
      // each damaged record's address was asked again, one at a time
      expect(server.requests.length - before).toBe(12);
    },
    60_000,
  );
});
