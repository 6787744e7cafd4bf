import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { missingTool } from './tools.js';
import { waitFor } from './wait.js';

/**
 * A real redis-server for the tests (Debian's package; `.ci/run` installs it),
 * on a free loopback port, with no persistence, stopped by the test. Never a mock.
 */
function findRedisServer(): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/sbin', '/usr/local/bin'];
  for (const dir of dirs) {
    const path = join(dir, 'redis-server');
    if (dir && existsSync(path) && spawnSync(path, ['--version'], { timeout: 5000 }).status === 0) return path;
  }
  return undefined;
}

export const REDIS_SERVER = findRedisServer();
/** for describe.skipIf titles: says why Redis tests did not run */
export const NO_REDIS = REDIS_SERVER ? '' : ' (SKIPPED: redis-server not found; install the redis-server package)';
/** `describe.skipIf(noRedis())`: skips without redis-server, saying so; fails instead under CI=true */
export const noRedis = (): boolean => missingTool('redis-server', !REDIS_SERVER && 'not found on PATH or in /usr/bin (apt-get install redis-server)');

export interface TestRedis {
  port: number;
  /** redis://127.0.0.1:port, with the password when there is one */
  url: string;
  /** SIGKILL: gone at once, as a crashed or unplugged Redis */
  kill(): Promise<void>;
  /** starts again on the same port (empty: no persistence) */
  restart(): Promise<void>;
  /** SIGSTOP / SIGCONT: a Redis that hangs with its connections open */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

export async function startRedis(options: { password?: string } = {}): Promise<TestRedis> {
  if (!REDIS_SERVER) throw new Error('redis-server not found');
  const dir = await mkdtemp(join(tmpdir(), 'mailsift-redis-'));
  let port = await freePort();
  let child: ChildProcess | undefined;

  const launch = async (): Promise<void> => {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--loglevel', 'warning'];
    if (options.password) args.push('--requirepass', options.password);
    const c = spawn(REDIS_SERVER!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child = c;
    let out = '';
    c.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    c.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
    const exited = new Promise<number | null>((r) => c.once('exit', (code) => r(code)));
    // ready once it accepts a connection
    const up = async (): Promise<boolean> => {
      if (c.exitCode !== null) throw new Error(`redis-server exited ${c.exitCode}: ${out}`);
      return accepts(port);
    };
    await waitFor(up, { what: `redis-server to listen on port ${port}`, timeoutMs: 5000, intervalMs: 20 }).catch(async (err: Error) => {
      if (c.exitCode === null) {
        c.kill('SIGKILL');
        await exited;
      }
      throw new Error(`${err.message}: ${out}`);
    });
  };
  // a port taken between freePort() and the launch: try another, a bounded number of times
  for (let attempt = 0; ; attempt++) {
    try {
      await launch();
      break;
    } catch (err) {
      if (attempt >= 2) throw err;
      port = await freePort();
    }
  }

  const end = async (signal: NodeJS.Signals): Promise<void> => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const gone = new Promise((r) => c.once('exit', r));
    c.kill('SIGCONT');
    c.kill(signal);
    await gone;
  };
  const auth = options.password ? `:${encodeURIComponent(options.password)}@` : '';
  return {
    port,
    url: `redis://${auth}127.0.0.1:${port}`,
    kill: () => end('SIGKILL'),
    restart: launch,
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
    async stop() {
      await end('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}
