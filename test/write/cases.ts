// What the file-safety and no-loss tests share, in-process and spawned alike.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Offline engine without DNS: fast, no network, every row answered (a DNS nobody answers is the run's own failure: exit 4). */
export const LOCAL = ['--engine', 'local', '--no-dns', '-q'];
export const INPUT = 'name,email\nAnn,ann@example.com\nBob,bob@example.com\n';
/** A one-column list of `n` addresses, with its header. */
export const rows = (n: number): string => 'email\n' + Array.from({ length: n }, (_, i) => `user${i}@example.com`).join('\n') + '\n';

/** Makes, for each call, a fresh directory under `root` with these files in it. */
export function caseDirectories(root: string): (files: Record<string, string | Buffer>) => string {
  return (files) => {
    const dir = mkdtempSync(join(root, 'case-'));
    for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
    return dir;
  };
}

/** Every file of a directory (recursively) with its bytes: what a run must leave alone. */
export function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const path = join(dir, name);
    try {
      out[name] = readFileSync(path).toString('base64');
    } catch {
      out[name] = '(directory)';
    }
  }
  return out;
}
