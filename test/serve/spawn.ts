import { spawn, type ChildProcess } from 'node:child_process';
import { BIN } from '../support/run-cli.js';

// Spawns the built binary: run `npx tsc -p .` first.
export { BIN };

export interface Served {
  child: ChildProcess;
  url: string;
  stderr: () => string;
  exit: Promise<number | null>;
}

/**
 * Starts `mailsift serve --port 0 --no-dns ...` (without --no-dns when `dns` is
 * true), waiting (at most 30 s: a loaded machine (load average 25 on 2 cores) took more than 10 s to start one) for its listening line.
 */
export function startServe(args: string[], options: { dns?: boolean; env?: NodeJS.ProcessEnv } = {}): Promise<Served> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...(options.dns ? [] : ['--no-dns']), ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    ...(options.env ? { env: options.env } : {}),
  });
  let err = '';
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no listening line within 30 s; stderr: ${err}`));
    }, 30_000);
    child.stderr!.setEncoding('utf8').on('data', (c: string) => {
      err += c;
      const m = /^mailsift serve: listening on (http:\/\/127\.0\.0\.1:\d+)$/m.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]!, stderr: () => err, exit });
      }
    });
    void exit.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited ${code} before listening; stderr: ${err}`));
    });
  });
}
