import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new API key: 32 random bytes, URL-safe, with a prefix that makes it greppable in leaks. */
export function generateKey(): string {
  return `msk_${randomBytes(32).toString('base64url')}`;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/**
 * The accepted keys, held only as SHA-256 digests. Comparing digests of equal
 * length with timingSafeEqual, and always against every key, keeps the time a
 * check takes independent of how much of a key an attacker has guessed.
 */
export class KeyStore {
  private readonly hashes: Buffer[];

  constructor(keys: readonly string[]) {
    this.hashes = keys.map(sha256);
  }

  /**
   * The matching key's identity (hex digest, fit for a rate-limit bucket, never the
   * key itself), or undefined.
   */
  identify(presented: string): string | undefined {
    const probe = sha256(presented);
    let found: Buffer | undefined;
    for (const hash of this.hashes) {
      if (timingSafeEqual(hash, probe) && !found) found = hash;
    }
    return found?.toString('hex');
  }
}

/**
 * A key's public name: the first 12 hex digits of its SHA-256, the digest the
 * server already keys its rate-limit buckets by. Listing and revoking use it, so
 * a whole key is shown once (at creation) and never again.
 */
export function keyId(key: string): string {
  return sha256(key).toString('hex').slice(0, 12);
}

/** Enough of a key to recognise it in a password manager, not to use it: "msk_…x9Qz". */
export function keyHint(key: string): string {
  const prefix = /^[a-z]+_/.exec(key)?.[0] ?? '';
  return `${prefix}…${key.slice(-4)}`;
}

/** Keys from a keys file: one per line; blank lines and `#` comments are ignored. */
export function parseKeysFile(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** The token of `Authorization: Bearer <token>`, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^\s*bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}
