import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { UsageError } from '../errors.js';
import { fileTrouble } from '../fs/errno.js';
import { generateKey, parseKeysFile } from '../serve/keys.js';
import type { RateLimit } from '../serve/rate-limit.js';
import type { RedisTarget } from '../redis/url.js';
import type { Shape } from '../serve/render.js';
// the CLI layer declares the flags; only their type comes here (no commander in src/serve)
import type { ServeFlags } from './serve-command.js';

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

export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  return h.startsWith('::ffff:127.');
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

/** Checks the parsed flags together, reading no file; every problem is a UsageError. */
export function checkServeFlags(flags: ServeFlags): ServeSettings {
  let redis: ServeConfig['redis'];
  if (flags.redis !== undefined) {
    const prefix = flags.redisPrefix;
    if (/[\s\x00-\x1f]/.test(prefix)) throw new UsageError('--redis-prefix must not hold spaces or control characters');
    redis = { target: flags.redis, prefix, timeoutMs: flags.redisTimeout };
  }
  if (Boolean(flags.tlsCert) !== Boolean(flags.tlsKey)) {
    throw new UsageError('--tls-cert and --tls-key go together: give both or neither');
  }
  // The spec says HTTPS only; plain HTTP is for a sandbox on this machine.
  if (!flags.tlsCert && !isLoopback(flags.host) && !flags.allowInsecureHttp) {
    throw new UsageError(
      `refusing plain HTTP on ${flags.host}: give --tls-cert/--tls-key, bind a loopback host, or pass --allow-insecure-http`,
    );
  }
  return {
    host: flags.host,
    port: flags.port,
    rateLimit: flags.rateLimit,
    shape: flags.shape,
    dns: flags.dns,
    dnsServer: flags.dnsServer,
    dnsTimeoutMs: flags.dnsTimeout,
    redis,
    metrics: Boolean(flags.metrics),
    drainTimeoutMs: flags.drainTimeout,
    files: { keysFile: flags.keysFile, tlsCert: flags.tlsCert, tlsKey: flags.tlsKey },
    smtpAllowPrivate: flags.smtpAllowPrivate === true,
    smtpLeaseMs: flags.smtpLease,
  };
}

/** Reads the files the settings name; every problem is a UsageError. */
export async function loadServeConfig(settings: ServeSettings): Promise<ServeConfig> {
  const { files } = settings;
  const tls =
    files.tlsCert && files.tlsKey
      ? { cert: await readUserFile(files.tlsCert, '--tls-cert'), key: await readUserFile(files.tlsKey, '--tls-key') }
      : undefined;

  let keys: string[];
  let generatedKey: string | undefined;
  if (files.keysFile) {
    keys = parseKeysFile((await readUserFile(files.keysFile, '--keys-file')).toString('utf8'));
    if (keys.length === 0) throw new UsageError(`--keys-file: ${files.keysFile} holds no keys (create one with: mailsift keys create --keys-file ${files.keysFile})`);
  } else {
    generatedKey = generateKey();
    keys = [generatedKey];
  }
  return { ...settings, keys, generatedKey, tls };
}
