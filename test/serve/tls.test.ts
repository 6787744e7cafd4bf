import { expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KEY, serve } from './helpers.js';
import { missingTool } from '../support/tools.js';
import { throwawayCert } from '../support/throwaway-cert.js';

const hasOpenssl = spawnSync('openssl', ['version']).status === 0;

// A throwaway self-signed certificate for 127.0.0.1 (openssl makes it).
it.skipIf(missingTool('openssl', !hasOpenssl && 'not found (apt-get install openssl)'))('serves HTTPS with --tls-cert/--tls-key', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mailsift-tls-'));
  try {
    const { cert: certFile, key: keyFile } = throwawayCert(dir, '127.0.0.1', 'IP:127.0.0.1');
    const cert = await readFile(certFile);
    const s = await serve({ tls: { cert, key: await readFile(keyFile) } });
    try {
      expect(s.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const reply = await new Promise<{ status: number; limit: unknown; body: any }>((resolve, reject) => {
        const req = request(
          `${s.url}/api/validate`,
          { method: 'POST', ca: cert, headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' } },
          (res) => {
            let text = '';
            res.setEncoding('utf8').on('data', (c: string) => (text += c));
            res.on('end', () => resolve({ status: res.statusCode!, limit: res.headers['x-ratelimit-limit'], body: JSON.parse(text) }));
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify({ email: 'jane.doe@example.com' }));
      });
      expect(reply).toMatchObject({ status: 200, limit: '1000', body: { success: true, email: 'jane.doe@example.com' } });
    } finally {
      await s.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
