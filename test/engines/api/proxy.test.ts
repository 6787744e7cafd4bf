import { createServer, connect, type Server } from 'node:net';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/errors.js';
import { apiDispatcher, proxyEnv } from '../../../src/engines/api/proxy.js';
import { startFaultServer, type FaultServer } from '../../support/fault-server.js';

/** A minimal CONNECT proxy on 127.0.0.1 that records the targets it tunnels to. */
async function startConnectProxy(): Promise<{ url: string; targets: string[]; close: () => Promise<void> }> {
  const targets: string[] = [];
  const server: Server = createServer((client) => {
    client.once('data', (head) => {
      const [, target] = /^CONNECT (\S+) HTTP/.exec(head.toString()) ?? [];
      if (!target) return client.destroy();
      targets.push(target);
      const [host, port] = target.split(':');
      const upstream = connect(Number(port), host, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        client.pipe(upstream).pipe(client);
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    targets,
    close: () =>
      new Promise((r) => {
        server.close(() => r());
      }),
  };
}

async function post(env: Record<string, string>, origin: string): Promise<number> {
  const dispatcher = apiDispatcher(origin, 1, env);
  try {
    const res = await dispatcher.request({
      origin,
      path: '/api/validate',
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer test-key' },
      body: JSON.stringify({ email: 'a@example.com' }),
    });
    await res.body.text();
    return res.statusCode;
  } finally {
    await dispatcher.close();
  }
}

describe('proxy support', () => {
  let api: FaultServer;
  let proxy: Awaited<ReturnType<typeof startConnectProxy>>;
  beforeAll(async () => {
    api = await startFaultServer();
    proxy = await startConnectProxy();
  });
  afterAll(async () => {
    await api.close();
    await proxy.close();
  });

  it('reads lower- and upper-case variables, lower case first', () => {
    expect(proxyEnv({ https_proxy: 'http://a', HTTPS_PROXY: 'http://b', NO_PROXY: 'x' })).toEqual({
      httpProxy: '',
      httpsProxy: 'http://a',
      noProxy: 'x',
    });
  });

  it.each([
    ['HTTPS_PROXY', { HTTPS_PROXY: 'http://user:s3cret@bad host:8080' }],
    ['HTTPS_PROXY', { https_proxy: 'socks5://user:s3cret@proxy:1080' }],
    ['HTTP_PROXY', { HTTP_PROXY: 'proxy.internal:3128' }],
  ])('a malformed %s is a one-line usage error that never shows the value', (name, env) => {
    let error: unknown;
    try {
      apiDispatcher('https://api.example.com', 1, env);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toContain(name);
    expect((error as Error).message).not.toMatch(/s3cret|proxy\.internal|bad host/);
  });

  it('goes through HTTP_PROXY when it is set', async () => {
    expect(await post({ HTTP_PROXY: proxy.url }, api.url)).toBe(200);
    expect(proxy.targets).toEqual([new URL(api.url).host]);
  });

  it('goes direct for hosts in NO_PROXY, and without proxy variables', async () => {
    const before = proxy.targets.length;
    const sent = api.requests.length;
    expect(await post({ HTTP_PROXY: proxy.url, NO_PROXY: '127.0.0.1' }, api.url)).toBe(200);
    expect(await post({}, api.url)).toBe(200);
    expect(proxy.targets.length).toBe(before);
    expect(api.requests.length).toBe(sent + 2);
  });
});
