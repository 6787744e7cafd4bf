import { readFile } from 'node:fs/promises';
import { UsageError } from '../../errors.js';
import { fileTrouble } from '../../fs/errno.js';
import { generateKey, parseKeysFile } from '../../serve/keys.js';
import type { RateLimit } from '../../serve/rate-limit.js';
import type { RedisTarget } from '../../redis/url.js';
import type { Shape } from '../../serve/render.js';

export interface ServeConfig {
  host: string;
  port: number;
  keys: string[];
  /** set when no keys file was given: the one key of this run, to show the user once */
  generatedKey?: string;
  rateLimit: RateLimit;
  shape: Shape;
  tls?: { cert: Buffer; key: Buffer };
  dns: boolean;
  dnsServer?: string;
  dnsTimeoutMs: number;
  redis?: { target: RedisTarget; prefix: string; timeoutMs: number };
  metrics: boolean;
  drainTimeoutMs: number;
}

async function readUserFile(path: string, flag: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    throw new UsageError(`${flag}: cannot read ${path}: ${fileTrouble(err, 'read')}`, { cause: err });
  }
}

/** The files serve reads when it starts; paths as given. */
export interface ServeFiles {
  keysFile?: string;
  tlsCert?: string;
  tlsKey?: string;
}

/** The serve settings the flags alone decide: everything but what the named files hold. */
export type ServeSettings = Omit<ServeConfig, 'keys' | 'generatedKey' | 'tls'> & {
  files: ServeFiles;
  /** --smtp-allow-private */
  smtpAllowPrivate: boolean;
  /** --smtp-lease, milliseconds */
  smtpLeaseMs: number;
};

/** Reads the files the settings name; every problem is a UsageError. */
export async function loadServeConfig(settings: ServeSettings): Promise<ServeConfig> {
  const { files } = settings;
  const tls =
    files.tlsCert && files.tlsKey ? { cert: await readUserFile(files.tlsCert, '--tls-cert'), key: await readUserFile(files.tlsKey, '--tls-key') } : undefined;

  let keys: string[];
  let generatedKey: string | undefined;
  if (files.keysFile) {
    keys = parseKeysFile((await readUserFile(files.keysFile, '--keys-file')).toString('utf8'));
    if (keys.length === 0)
      throw new UsageError(`--keys-file: ${files.keysFile} holds no keys (create one with: mailsift keys create --keys-file ${files.keysFile})`);
  } else {
    generatedKey = generateKey();
    keys = [generatedKey];
  }
  return { ...settings, keys, generatedKey, tls };
}
