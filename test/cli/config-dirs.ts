// What login.test.ts and login-e2e.test.ts share.
import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { CliResult } from '../support/run-cli.js';

export const KEY = 'sk_test_4f9d2c8a7b6e5d4c3b2a1';

/** Makes, for each call, a fresh XDG_CONFIG_HOME under `dir` with mailsift/ in it, mode `mode`. */
export function configDirs(dir: string): (mode?: number) => { env: Record<string, string>; mailsift: string; credentials: string } {
  let n = 0;
  return (mode = 0o700) => {
    const config = join(dir, `config-${++n}`);
    const mailsift = join(config, 'mailsift');
    mkdirSync(mailsift, { recursive: true });
    chmodSync(mailsift, mode);
    return { env: { XDG_CONFIG_HOME: config }, mailsift, credentials: join(mailsift, 'credentials') };
  };
}

/** stderr, which must be one line. */
export const oneLine = (r: CliResult): string => {
  expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
  return r.stderr.trim();
};
