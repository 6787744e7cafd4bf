import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * A throwaway self-signed certificate (a P-256 key, valid a day: openssl
 * makes it in a few milliseconds) for `commonName`, with `subjectAltName` when
 * given, written into `dir`. Throws with openssl's own words when it cannot.
 */
export function throwawayCert(dir: string, commonName: string, subjectAltName?: string): { cert: string; key: string } {
  const [cert, key] = [join(dir, 'tls-cert.pem'), join(dir, 'tls-key.pem')];
  const made = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      `/CN=${commonName}`,
      ...(subjectAltName ? ['-addext', `subjectAltName=${subjectAltName}`] : []),
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { encoding: 'utf8', timeout: 20_000 },
  );
  if (made.status !== 0) throw new Error(`openssl could not make a certificate for ${commonName}: ${made.stderr}`);
  return { cert, key };
}
