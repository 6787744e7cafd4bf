// The real binary behind express-rate-limit on a server whose whole clock is an
// hour behind ours (limiter and Date header alike), writing its legacy
// X-RateLimit-* beside draft-6 headers (the default of many set-ups). The first
// answer's skew is still a second wide, so the two dialects' resets fell a
// second apart there and within a second later on: the legacy policy was
// merged away from every later answer and kept its first window, with no
// answer to say it had turned. Each of its waits then doubled: 17 of 25 rows
// in two minutes, where 25 take 5 s.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { runCli } from '../../support/run-cli.js';

const SERVER = fileURLToPath(new URL('../../support/limiter-server.mjs', import.meta.url));
const KEY = 'sk_test_SKEWED_CLOCK';

let child: ChildProcess | undefined;
afterEach(() => {
  child?.kill();
  child = undefined;
});

/** The limiter server in a process of its own, its clock `offsetMs` off: its URL. */
async function startSkewed(offsetMs: number, limit: string): Promise<string> {
  child = spawn(process.execPath, [SERVER, '--library', 'express', '--limit', limit, '--clock-offset-ms', String(offsetMs)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  for await (const line of lines) return (JSON.parse(line) as { url: string }).url;
  throw new Error('the limiter server ended before it printed its URL');
}

it('legacy + draft-6 headers from a server an hour behind: every row, no 429, no stall', async () => {
  const url = await startSkewed(-3_600_000, '5/1000:legacy+draft-6');
  const r = await runCli(['validate', '--batch-size', '1', '--no-progress'], {
    env: { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: url },
    stdin: Array.from({ length: 25 }, (_, i) => `u${i}@example${i % 3}.com`).join('\n') + '\n',
    // 25 at 5 per second take 4 s at best and about 8 when every reset is a second late; a stall takes minutes
    timeoutMs: 30_000,
  });
  const stats = (await (await fetch(`${url}/__stats`)).json()) as { requests: number; count429: number };
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout.trim().split('\n')).toHaveLength(26);
  expect(stats).toMatchObject({ requests: 25, count429: 0 });
}, 60_000);
