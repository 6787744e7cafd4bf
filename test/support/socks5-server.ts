import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

/**
 * A small SOCKS5 server (RFC 1928, CONNECT only) with optional user/password
 * authentication (RFC 1929), on 127.0.0.1 and a free port. It records the
 * destinations it was asked for; wrong credentials get the RFC 1929 failure
 * reply and the connection is closed.
 */
export interface TestSocksServer {
  port: number;
  /** `host:port` per CONNECT that passed authentication */
  readonly connects: string[];
  /** authentication attempts that failed */
  readonly refused: number;
  close(): Promise<void>;
}

export interface SocksOptions {
  /**
   * destinations (`host:port`) the proxy never reaches: it neither connects
   * nor answers the CONNECT, as when a firewall beyond it drops port 25
   * (the client's handshake times out)
   */
  blackhole?: (destination: string) => boolean;
}

export async function startSocksServer(auth?: { user: string; password: string }, options: SocksOptions = {}): Promise<TestSocksServer> {
  const connects: string[] = [];
  let refused = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    let buf = Buffer.alloc(0);
    let stage: 'greeting' | 'auth' | 'request' | 'piping' = 'greeting';
    const need = (n: number) => buf.length >= n;
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        if (stage === 'greeting') {
          if (!need(2) || !need(2 + buf[1]!)) return;
          const methods = [...buf.subarray(2, 2 + buf[1]!)];
          buf = buf.subarray(2 + buf[1]!);
          const method = auth ? (methods.includes(2) ? 2 : 0xff) : methods.includes(0) ? 0 : 0xff;
          client.write(Buffer.from([5, method]));
          if (method === 0xff) return void client.end();
          stage = auth ? 'auth' : 'request';
        } else if (stage === 'auth') {
          if (!need(2)) return;
          const ulen = buf[1]!;
          if (!need(3 + ulen) || !need(3 + ulen + buf[2 + ulen]!)) return;
          const user = buf.subarray(2, 2 + ulen).toString();
          const plen = buf[2 + ulen]!;
          const password = buf.subarray(3 + ulen, 3 + ulen + plen).toString();
          buf = buf.subarray(3 + ulen + plen);
          const ok = user === auth!.user && password === auth!.password;
          client.write(Buffer.from([1, ok ? 0 : 1]));
          if (!ok) {
            refused++;
            return void client.end();
          }
          stage = 'request';
        } else if (stage === 'request') {
          if (!need(5)) return;
          const atyp = buf[3]!;
          const addrLen = atyp === 1 ? 4 : atyp === 4 ? 16 : 1 + buf[4]!;
          if (!need(4 + addrLen + 2)) return;
          const addr = buf.subarray(4, 4 + addrLen);
          const host = atyp === 1 ? [...addr].join('.') : atyp === 4 ? (addr.toString('hex').match(/.{4}/g) ?? []).join(':') : addr.subarray(1).toString();
          const port = buf.readUInt16BE(4 + addrLen);
          buf = buf.subarray(4 + addrLen + 2);
          stage = 'piping';
          client.off('data', onData);
          connects.push(`${host}:${port}`);
          if (options.blackhole?.(`${host}:${port}`)) return;
          const upstream = connect({ host, port });
          sockets.add(upstream);
          upstream.on('close', () => sockets.delete(upstream));
          upstream.once('connect', () => {
            client.write(Buffer.from([5, 0, 0, 1, 127, 0, 0, 1, 0, 0]));
            if (buf.length) upstream.write(buf);
            client.pipe(upstream).pipe(client);
          });
          upstream.once('error', (err: NodeJS.ErrnoException) => {
            // 5: connection refused; 1: general failure
            if (!client.destroyed) client.end(Buffer.from([5, err.code === 'ECONNREFUSED' ? 5 : 1, 0, 1, 0, 0, 0, 0, 0, 0]));
            client.destroy();
          });
          return;
        } else return;
      }
    };
    client.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connects,
    get refused() {
      return refused;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
