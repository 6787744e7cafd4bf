import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import type { SocksProxy } from './proxy.js';
import { MAX_TIMER_MS, systemClock, type Clock } from '../../../time/clock.js';
import { ReplyError, ReplyParser, showReply, type Reply } from './reply.js';

/**
 * Why a session ended early:
 *   refused          the TCP connection was refused or unroutable (a dead host)
 *   connect-timeout  no TCP connection within the timeout (a dead host, or
 *                    outbound port 25 filtered: only many of them together say which)
 *   timeout          a reply (the banner included) did not come in time
 *   budget           the time allowed for this mail server ran out
 *   dropped          the server closed or reset the connection
 *   protocol         what the server sent is not a reply to what we asked
 *                    (a second banner, an unsolicited or extra reply, not SMTP)
 *   tls              the TLS handshake after STARTTLS failed
 *   proxy-auth, proxy  our own SOCKS5 set-up failed
 *   aborted          we called it off (serve's client hung up, the run ended):
 *                    nothing is said of the server
 */
export type FailureKind = 'refused' | 'connect-timeout' | 'timeout' | 'budget' | 'dropped' | 'protocol' | 'tls' | 'proxy-auth' | 'proxy' | 'aborted';

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
  /** per reply; also bounds the TCP (and proxy) handshake */
  timeoutMs: number;
  /** how long the greeting may take (servers that pause before it are common) */
  bannerTimeoutMs?: number;
  /** epoch ms after which nothing more is waited for: the host's time budget */
  deadlineAt?: number;
  proxy?: SocksProxy;
  signal?: AbortSignal;
  /** what `deadlineAt` and every wait of the session (replies, handshakes, QUIT) are on: the checker's, the real clock by default */
  clock?: Clock;
}

/** how long QUIT waits for the server to close after its 221 */
const QUIT_CLOSE_MS = 1_000;

/**
 * The reply codes RFC 5321 §4.3.2 allows after each command (421 and any
 * 4xx/5xx always may come). Any other code cannot be the answer to what we
 * sent: the replies have slipped against the commands, and the session is
 * not to be believed.
 */
const SUCCESS: Record<string, readonly number[]> = {
  greeting: [220],
  EHLO: [250],
  HELO: [250],
  MAIL: [250],
  RCPT: [250, 251, 252],
  RSET: [250],
  STARTTLS: [220],
  QUIT: [221],
};

/**
 * One SMTP client connection: connect, read the banner, then one command and
 * its reply at a time. Replies are matched to commands strictly: a reply when
 * none is owed (a second banner, an unsolicited line) or a code that cannot
 * answer the command ends the session as a protocol failure, so that a reply
 * can never be taken for the answer to the next command. PIPELINING is not
 * used even where it is advertised: a verifier's dialogue is short, and lock
 * step is what makes every reply provably the answer to its command. It never
 * knows DATA: the checker has no way to send mail through it. STARTTLS
 * (RFC 3207) turns the same connection, direct or through the proxy, into a
 * TLS one (`startTls`).
 */
export class SmtpSession {
  private parser = new ReplyParser();
  private readonly replies: Reply[] = [];
  private waiting: { resolve: (r: Reply) => void; reject: (e: SessionError) => void } | undefined;
  private failure: SessionError | undefined;
  private ended = false;
  /** replies owed by the server: the greeting, then one per command sent */
  private owed = 1;
  private socket: Socket;
  /** every socket of the session (the plain one, then the TLS one over it): all destroyed at the end */
  private readonly sockets: Socket[] = [];
  /** the listener that reads replies off the plain socket, removed when TLS takes it over */
  private readonly onData = (chunk: string) => this.receive(chunk);
  private tls = false;
  /** a reply timed out: we have half-closed the connection, and the server may still be at work on it (see letGo) */
  private lettingGo = false;
  /** how long the last command's reply took, in ms (a server that starts to hold its replies is tarpitting) */
  lastReplyMs = 0;
  private readonly clock: Clock;

  private constructor(
    socket: Socket,
    private readonly o: SessionOptions,
  ) {
    this.clock = o.clock ?? systemClock;
    this.socket = socket;
    this.sockets.push(socket);
    socket.setEncoding('latin1');
    socket.setNoDelay(true);
    socket.on('data', this.onData);
    this.watch(socket);
  }

  /** What the server sent: replies, each owed to a command, or a protocol failure. */
  private receive(chunk: string): void {
    let got: Reply[];
    try {
      got = this.parser.push(chunk);
    } catch (err) {
      this.fail(new SessionError('protocol', (err as ReplyError).message));
      this.destroy();
      return;
    }
    for (const r of got) {
      if (this.owed === 0 && r.code === 421) {
        // RFC 5321 §3.8: a server may send 421 unasked and close (Postfix's
        // smtpd_hard_error_limit does, right after the reply that reached it):
        // the replies before it stand; the session is over (the server's own
        // close is waited for by quit(): it counts the session until then)
        this.deliver();
        this.fail(new SessionError('dropped', `the server ended the session (${showReply(r)})`));
        return;
      }
      if (this.owed === 0) {
        this.fail(new SessionError('protocol', `a reply nobody asked for (${r.code} ${r.text.slice(0, 60)})`));
        this.destroy();
        return;
      }
      this.owed--;
      this.replies.push(r);
    }
    this.deliver();
  }

  private watch(socket: Socket): void {
    socket.on('error', (err: NodeJS.ErrnoException) => this.fail(new SessionError('dropped', `connection lost (${err.code ?? err.message})`)));
    socket.on('close', () => {
      this.ended = true;
      this.fail(new SessionError('dropped', 'the server closed the connection'));
    });
  }

  /** Opens the TCP connection (through the proxy, if any); the greeting is read by greeting(). */
  static async connect(o: SessionOptions): Promise<SmtpSession> {
    const socket = await (o.proxy ? viaProxy(o) : direct(o));
    const session = new SmtpSession(socket, o);
    // our own abort is no fault of the server's: told apart from a hang-up
    const onAbort = () => session.abort();
    if (o.signal?.aborted) onAbort();
    o.signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('close', () => o.signal?.removeEventListener('abort', onAbort));
    return session;
  }

  /** Connects and reads the banner (returned as `greeting`). */
  static async open(o: SessionOptions): Promise<{ session: SmtpSession; greeting: Reply }> {
    const session = await SmtpSession.connect(o);
    try {
      return { session, greeting: await session.greeting() };
    } catch (err) {
      session.destroy();
      throw err;
    }
  }

  /** The server's greeting, waited for up to the banner timeout. */
  greeting(): Promise<Reply> {
    return this.read('greeting', this.o.bannerTimeoutMs ?? this.o.timeoutMs);
  }

  /** Sends one command line and reads its reply. */
  async command(line: string): Promise<Reply> {
    if (this.failure) throw this.failure;
    // one command per line: an address can never smuggle in a second one (DATA)
    if (/[\r\n]/.test(line)) throw new SessionError('protocol', 'a command with a line break in it');
    this.owed++;
    // on the session's clock, as its timeouts are: a reply held is judged as one that times out
    const sent = this.clock.now();
    this.socket.write(`${line}\r\n`);
    const reply = await this.read(line.split(' ')[0]!.toUpperCase(), this.o.timeoutMs);
    this.lastReplyMs = this.clock.now() - sent;
    return reply;
  }

  /**
   * Ends politely: QUIT, then its 221. Resolves true when the server answered
   * QUIT as it should (or had hung up); false when the answer was something
   * else — the replies had slipped, and nothing read in this session is to be
   * believed. Never throws. After a timeout the connection is left half-closed,
   * for release() to let go of once the server has.
   */
  async quit(): Promise<boolean> {
    let inStep = true;
    if (!this.ended && !this.failure) {
      try {
        await this.command('QUIT');
      } catch (err) {
        // a server gone or slow at QUIT has said all it had to; a wrong answer has not
        inStep = !(err instanceof SessionError && err.kind === 'protocol');
      }
    }
    // The server closes after its 221 (or its 421): waited for, briefly, so
    // that it has counted this session out before our next one to it opens —
    // a server limiting connections at once (Postfix's anvil) counts them until then.
    if (this.failure === undefined || this.failure.kind === 'dropped') await this.closedByServer(Math.min(this.o.timeoutMs, QUIT_CLOSE_MS));
    if (!this.lettingGo) {
      this.socket.end();
      this.destroy();
    }
    return inStep;
  }

  destroy(): void {
    for (const s of this.sockets) s.destroy();
  }

  /**
   * Lets the connection go: at once, unless a reply timed out. Then the
   * server may still be working on our command — Exim's `delay`, Postfix's
   * `sleep`, a slow lookup — and counts the connection as open until it
   * notices we left, which it may do only when it next reads. So the session
   * is over for us only when the server has closed its end (or after
   * `graceMs`): a caller that holds a session slot until then never has more
   * sessions open on the server's side than its limit. Returns what to wait
   * for, or undefined when the connection is gone at once. Never rejects.
   */
  release(graceMs: number): Promise<void> | undefined {
    if (!this.lettingGo || this.ended) {
      this.destroy();
      return undefined;
    }
    const socket = this.socket;
    return new Promise((resolve) => {
      const done = () => {
        cancel();
        socket.off('close', done);
        this.destroy();
        resolve();
      };
      const cancel = this.clock.setTimer(done, Math.max(0, graceMs));
      socket.once('close', done);
    });
  }

  /**
   * A reply did not come in time: we stop waiting for it, but only
   * half-close the connection (FIN), and read and drop what still comes, so
   * that the server closes its end when it is done (see release()).
   */
  private letGo(): void {
    if (this.lettingGo || this.ended) return;
    this.lettingGo = true;
    const socket = this.socket;
    socket.off('data', this.onData);
    socket.resume();
    socket.end();
  }

  /**
   * After the server's 220 to STARTTLS: the TLS handshake on this connection,
   * then the session goes on over TLS (EHLO again: RFC 3207 §4.2 — what the
   * server said before is forgotten). Opportunistic, as MTAs do it (RFC 7435):
   * the certificate is not verified and old protocol versions are allowed,
   * since a checker sends nothing secret and plain text is the alternative.
   * Anything the server sent after its 220 and before the handshake is a
   * protocol failure: it could only be an injection (CVE-2011-0411).
   */
  async startTls(servername: string | undefined): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.replies.length > 0 || this.parser.holding) {
      const err = new SessionError('protocol', 'the server sent more after its 220 to STARTTLS');
      this.fail(err);
      this.destroy();
      throw err;
    }
    const plain = this.socket;
    plain.off('data', this.onData);
    const left = this.o.deadlineAt === undefined ? Infinity : this.o.deadlineAt - this.clock.now();
    const wait = Math.max(0, Math.min(this.o.timeoutMs, left));
    const tls = await new Promise<TLSSocket>((resolve, reject) => {
      const t = tlsConnect({
        socket: plain,
        // SNI only for a name, never for an address (RFC 6066 §3)
        ...(servername && !/^[\d.]+$|:/.test(servername) ? { servername: servername.replace(/\.$/, '') } : {}),
        rejectUnauthorized: false,
        minVersion: 'TLSv1',
        ciphers: 'DEFAULT:@SECLEVEL=0',
      });
      const cancel = this.clock.setTimer(
        () => failed(new SessionError(left < this.o.timeoutMs ? 'budget' : 'tls', `no TLS handshake within ${wait} ms`)),
        wait,
      );
      const failed = (err: Error) => {
        cancel();
        t.off('secureConnect', done);
        t.destroy();
        reject(err instanceof SessionError ? err : new SessionError('tls', `the TLS handshake failed (${(err as NodeJS.ErrnoException).code ?? err.message})`));
      };
      const done = () => {
        cancel();
        t.off('error', failed).off('close', closed);
        resolve(t);
      };
      // the server hung up, or we called it off (abort() destroys the plain socket)
      const closed = () => failed(this.failure ?? new SessionError('dropped', 'the server closed the connection during the TLS handshake'));
      t.once('error', failed).once('close', closed).once('secureConnect', done);
    }).catch((err: SessionError) => {
      this.fail(err);
      plain.destroy();
      throw err;
    });
    this.parser = new ReplyParser();
    this.socket = tls;
    this.sockets.push(tls);
    tls.setEncoding('latin1');
    tls.on('data', this.onData);
    this.watch(tls);
    this.tls = true;
  }

  /** true once STARTTLS succeeded */
  get secure(): boolean {
    return this.tls;
  }

  /** Resolves when the server has closed its side, or after `ms`. */
  private closedByServer(ms: number): Promise<void> {
    if (this.ended || this.socket.readableEnded) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        cancel();
        this.socket.off('end', done);
        this.socket.off('close', done);
        resolve();
      };
      const cancel = this.clock.setTimer(done, ms);
      this.socket.once('end', done);
      this.socket.once('close', done);
    });
  }

  /** Called off by us: what is waited for fails as 'aborted', not as a dropped connection. */
  private abort(): void {
    this.fail(new SessionError('aborted', 'the check was called off'));
    this.destroy();
  }

  private read(what: string, timeoutMs: number): Promise<Reply> {
    const ready = this.replies.shift();
    if (ready) return Promise.resolve(this.check(what, ready));
    if (this.failure) return Promise.reject(this.failure);
    const left = this.o.deadlineAt === undefined ? Infinity : this.o.deadlineAt - this.clock.now();
    const budgetBound = left < timeoutMs;
    const wait = Math.max(0, Math.min(timeoutMs, left));
    return new Promise<Reply>((resolve, reject) => {
      const cancel = this.clock.setTimer(() => {
        this.waiting = undefined;
        const err = budgetBound
          ? new SessionError('budget', `the time allowed for this mail server ran out waiting for the ${what === 'greeting' ? 'banner' : `reply to ${what}`}`)
          : new SessionError('timeout', `no ${what === 'greeting' ? 'banner' : `reply to ${what}`} within ${timeoutMs} ms`);
        this.fail(err);
        this.letGo();
        reject(err);
      }, wait);
      this.waiting = {
        resolve: (r) => {
          cancel();
          resolve(r);
        },
        reject: (e) => {
          cancel();
          reject(e);
        },
      };
    }).then((r) => this.check(what, r));
  }

  /** A reply whose code cannot answer `what` is a protocol failure (see SUCCESS). */
  private check(what: string, r: Reply): Reply {
    const ok = SUCCESS[what];
    if (ok && r.code < 400 && !ok.includes(r.code)) {
      const err = new SessionError('protocol', `${r.code} is no answer to ${what === 'greeting' ? 'the connection' : what}`);
      this.fail(err);
      this.destroy();
      throw err;
    }
    return r;
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
    const cancel = (o.clock ?? systemClock).setTimer(() => {
      socket.destroy();
      reject(new SessionError('connect-timeout', `no TCP connection within ${o.timeoutMs} ms`));
    }, o.timeoutMs);
    const onAbort = () => {
      socket.destroy();
      cancel();
      reject(o.signal!.reason);
    };
    o.signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => {
      cancel();
      o.signal?.removeEventListener('abort', onAbort);
      resolve(socket);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      cancel();
      o.signal?.removeEventListener('abort', onAbort);
      // ETIMEDOUT from the kernel is a connection that never opened, as our own timer's
      reject(new SessionError(err.code === 'ETIMEDOUT' ? 'connect-timeout' : 'refused', `cannot connect (${err.code ?? err.message})`));
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
  // module.exports as the default export: what node and the bundle (scripts/bundle.mjs) both give
  const { SocksClient } = (await import('socks')).default;
  // our own connection to the proxy, and our own timer on the session's clock: the handshake's
  // timeout (the proxy's connection to the mail server included) is ours to keep, and a test's to drive
  const toProxy = netConnect({ host: p.host, port: p.port });
  let timedOut = false;
  const cancel = (o.clock ?? systemClock).setTimer(() => {
    timedOut = true;
    toProxy.destroy();
  }, o.timeoutMs);
  try {
    const { socket } = await SocksClient.createConnection({
      proxy: { host: p.host, port: p.port, type: 5, userId: p.userId, password: p.password },
      command: 'connect',
      destination: { host: o.host, port: o.port },
      existing_socket: toProxy,
      // never before ours (the package's timer is unref'd and closes only a handshake still under way)
      timeout: MAX_TIMER_MS,
    });
    return socket;
  } catch (err) {
    toProxy.destroy();
    if (timedOut) throw new SessionError('connect-timeout', `no connection through the proxy within ${o.timeoutMs} ms`);
    const message = String((err as Error).message ?? '');
    const code = (err as NodeJS.ErrnoException).code;
    if (/Authentication failed|no accepted authentication/i.test(message)) {
      throw new SessionError('proxy-auth', 'the SOCKS5 proxy refused the user name or password');
    }
    // the proxy could not reach the mail server: like a refused connection
    if (/rejected connection/i.test(message)) {
      const why = message.split(' - ')[1] ?? 'refused';
      throw new SessionError(/TTL|timed? ?out/i.test(why) ? 'connect-timeout' : 'refused', `the proxy could not connect (${why})`);
    }
    // the handshake's timeout covers the proxy's own connection to the mail
    // server: a slow or unreachable MX host, not a broken proxy
    if (/timed out/i.test(message)) throw new SessionError('connect-timeout', `no connection through the proxy within ${o.timeoutMs} ms`);
    // the socks package puts the socket's error code in the message only
    const why = code ?? /\bE[A-Z]{3,}\b/.exec(message)?.[0] ?? message.slice(0, 80);
    throw new SessionError('proxy', `cannot connect to it (${why})`);
  } finally {
    cancel();
  }
}
