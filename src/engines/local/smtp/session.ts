import { connect as netConnect, type Socket } from 'node:net';
import type { SocksProxy } from './proxy.js';
import { ReplyError, ReplyParser, type Reply } from './reply.js';

/**
 * Why a session ended early. `connect` failures (refused, unreachable, timed
 * out before the TCP handshake) let the checker try another MX host; the rest
 * end the attempt. `proxy-auth` and `proxy` are about our own set-up.
 */
export type FailureKind = 'connect' | 'timeout' | 'dropped' | 'protocol' | 'proxy-auth' | 'proxy';

export class SessionError extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
  ) {
    super(message);
  }
}

export interface SessionOptions {
  /** IP address (or, through a socks5h proxy, a host name) */
  host: string;
  port: number;
  /** per reply, the banner included; also bounds the TCP (and proxy) handshake */
  timeoutMs: number;
  proxy?: SocksProxy;
  signal?: AbortSignal;
}

/**
 * One SMTP client connection: open it, read the banner, send a command and
 * read its reply — one at a time (PIPELINING is not needed: a verifier's
 * dialogue is short and servers process commands in order anyway). It never
 * knows DATA: the checker has no way to send mail through it.
 */
export class SmtpSession {
  private readonly parser = new ReplyParser();
  private readonly replies: Reply[] = [];
  private waiting: { resolve: (r: Reply) => void; reject: (e: SessionError) => void } | undefined;
  private failure: SessionError | undefined;
  private ended = false;

  private constructor(
    private readonly socket: Socket,
    private readonly timeoutMs: number,
  ) {
    socket.setEncoding('latin1');
    socket.setNoDelay(true);
    socket.on('data', (chunk: string) => {
      let got: Reply[];
      try {
        got = this.parser.push(chunk);
      } catch (err) {
        this.fail(new SessionError('protocol', (err as ReplyError).message));
        socket.destroy();
        return;
      }
      for (const r of got) this.replies.push(r);
      this.deliver();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => this.fail(new SessionError('dropped', `connection lost (${err.code ?? err.message})`)));
    socket.on('close', () => {
      this.ended = true;
      this.fail(new SessionError('dropped', 'the server closed the connection'));
    });
  }

  /** Connects and reads the banner (returned as `greeting`). */
  static async open(o: SessionOptions): Promise<{ session: SmtpSession; greeting: Reply }> {
    const socket = await (o.proxy ? viaProxy(o) : direct(o));
    const session = new SmtpSession(socket, o.timeoutMs);
    const onAbort = () => session.destroy();
    o.signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('close', () => o.signal?.removeEventListener('abort', onAbort));
    try {
      return { session, greeting: await session.read('the banner') };
    } catch (err) {
      session.destroy();
      throw err;
    }
  }

  /** Sends one command line and reads its reply. */
  async command(line: string): Promise<Reply> {
    if (this.failure) throw this.failure;
    // one command per line: an address can never smuggle in a second one (DATA)
    if (/[\r\n]/.test(line)) throw new SessionError('protocol', 'a command with a line break in it');
    this.socket.write(`${line}\r\n`);
    return this.read(line.split(' ')[0]!);
  }

  /**
   * Ends politely: QUIT, then waits a moment for the 221 and the close. Never
   * throws; a server that is gone already is simply let go.
   */
  async quit(): Promise<void> {
    if (!this.ended && !this.failure) {
      try {
        await this.command('QUIT');
      } catch {
        // the server went away first: nothing more to say
      }
    }
    this.socket.end();
    this.socket.destroy();
  }

  destroy(): void {
    this.socket.destroy();
  }

  private read(what: string): Promise<Reply> {
    const ready = this.replies.shift();
    if (ready) return Promise.resolve(ready);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting = undefined;
        const err = new SessionError('timeout', `no reply to ${what} within ${this.timeoutMs} ms`);
        this.fail(err);
        this.socket.destroy();
        reject(err);
      }, this.timeoutMs);
      this.waiting = {
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
    });
  }

  private deliver(): void {
    const w = this.waiting;
    if (!w || this.replies.length === 0) return;
    this.waiting = undefined;
    w.resolve(this.replies.shift()!);
  }

  private fail(err: SessionError): void {
    this.failure ??= err;
    const w = this.waiting;
    this.waiting = undefined;
    w?.reject(this.failure);
  }
}

function direct(o: SessionOptions): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = netConnect({ host: o.host, port: o.port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new SessionError('connect', `no TCP connection within ${o.timeoutMs} ms`));
    }, o.timeoutMs);
    const onAbort = () => {
      socket.destroy();
      clearTimeout(timer);
      reject(o.signal!.reason);
    };
    o.signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      resolve(socket);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      reject(new SessionError('connect', `cannot connect (${err.code ?? err.message})`));
    });
  });
}

/**
 * Through the SOCKS5 proxy. The socks package's errors carry the proxy
 * options (the password among them): they are never passed on, only a message
 * of our own.
 */
async function viaProxy(o: SessionOptions): Promise<Socket> {
  const p = o.proxy!;
  // loaded only with a proxy: most runs never need it
  const { SocksClient } = await import('socks');
  try {
    const { socket } = await SocksClient.createConnection({
      proxy: { host: p.host, port: p.port, type: 5, userId: p.userId, password: p.password },
      command: 'connect',
      destination: { host: o.host, port: o.port },
      timeout: o.timeoutMs,
    });
    return socket;
  } catch (err) {
    const message = String((err as Error).message ?? '');
    const code = (err as NodeJS.ErrnoException).code;
    if (/Authentication failed|no accepted authentication/i.test(message)) {
      throw new SessionError('proxy-auth', 'the SOCKS5 proxy refused the user name or password');
    }
    // the proxy could not reach the mail server: like a refused connection
    if (/rejected connection/i.test(message)) {
      const why = message.split(' - ')[1] ?? 'refused';
      throw new SessionError('connect', `the proxy could not connect (${why})`);
    }
    // the handshake's timeout covers the proxy's own connection to the mail
    // server: a slow or unreachable MX host, not a broken proxy
    if (/timed out/i.test(message)) throw new SessionError('connect', `no connection through the proxy within ${o.timeoutMs} ms`);
    // the socks package puts the socket's error code in the message only
    const why = code ?? /\bE[A-Z]{3,}\b/.exec(message)?.[0] ?? message.slice(0, 80);
    throw new SessionError('proxy', `cannot connect to it (${why})`);
  }
}
