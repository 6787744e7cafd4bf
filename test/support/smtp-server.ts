import { SMTPServer, type SMTPServerAddress, type SMTPServerSession } from 'smtp-server';
import type { AddressInfo, Socket } from 'node:net';
import { systemClock, type Clock } from '../../src/time/clock.js';

/**
 * A real SMTP server (the smtp-server package) on loopback, scripted by local
 * part and by domain, that records every command it receives. Several loopback
 * addresses share one port so that MX hosts can behave differently while
 * `--smtp-port` stays one number:
 *   127.0.0.1  the scripted server
 *   127.0.0.3  accepts TCP, never sends the banner
 *   127.0.0.4  answers the banner with 554 5.7.1 (the checker's IP is blocked)
 *   127.0.0.5  the scripted server, but a second connection at once gets Exim's
 *              "421 Too many concurrent SMTP connections from this IP"
 *   127.0.0.6  the scripted server, with its banner held `bannerDelayMs` (a tarpit)
 *   (127.0.0.2 listens to nothing: a closed port)
 *
 * Local parts (any domain of the scripted server):
 *   unknown*   550 5.1.1 user unknown          full*    552 5.2.2 mailbox full
 *   disabled*  550 5.2.1 (Gmail's disabled)     moved*   551 5.1.6 user has moved
 *   full4*     452 4.2.2 over quota            grey*    451 4.7.1 greylisted, then 250
 *   longgrey*  451 4.7.1 greylisted twice (past the checker's one retry), then 250
 *   closing*   421 4.3.2 closing               policy*  554 5.7.1 blocked (spamhaus)
 *   drop*      the connection is cut mid-dialogue   hang*    no reply, ever
 *   slow*      250 after 150 ms (sessions that last long enough to overlap)
 *   anything else 250
 * Domains: `catchall.*` accept every local part (the scripted ones included);
 * `limit<N>.*` answer 452 4.5.3 after N recipients in one transaction
 * (`olimit<N>.*`: OpenSMTPD's 451 4.5.3 Too many recipients);
 * `nomailbox.*` refuse every local part but the scripted ones with 550 5.1.1.
 * A random local part (the catch-all probe) is refused with 550 5.1.1 except
 * on catch-all domains.
 */
export interface TestSmtpServer {
  port: number;
  /** every command received, per connection, as typed (e.g. `RCPT TO:<a@b>`) */
  readonly sessions: { local: string; commands: string[] }[];
  /** connections open now and at most so far, per local address */
  readonly open: Map<string, number>;
  readonly maxOpen: Map<string, number>;
  /** all commands of all sessions, flat */
  commands(): string[];
  /** connections refused with 421 too many connections (127.0.0.5) */
  readonly busyRefusals: number;
  close(): Promise<void>;
}

const BEHAVIOURS: [RegExp, number, string][] = [
  [/^unknown/, 550, '5.1.1 <%s>: Recipient address rejected: User unknown in local recipient table'],
  [/^full4/, 452, '4.2.2 Mailbox over quota'],
  [/^disabled/, 550, '5.2.1 The email account that you tried to reach is disabled.'],
  [/^moved/, 551, '5.1.6 User has moved; please try <elsewhere@example.org>'],
  [/^full/, 552, '5.2.2 Mailbox full'],
  [/^closing/, 421, '4.3.2 Service shutting down, closing transmission channel'],
  [/^policy/, 554, '5.7.1 Service unavailable; Client host [127.0.0.1] blocked using zen.spamhaus.org'],
];

function codeError(code: number, text: string): Error {
  const err = new Error(text) as Error & { responseCode: number };
  err.responseCode = code;
  return err;
}

export async function startSmtpServer(options: { port?: number; bannerDelayMs?: number; clock?: Clock } = {}): Promise<TestSmtpServer> {
  /** what the tarpit's banner and the slow replies wait on: the checker's fake clock, so that a test drives them */
  const clock = options.clock ?? systemClock;
  let busyRefusals = 0;
  const sessions: { local: string; commands: string[] }[] = [];
  const byId = new Map<string, { local: string; commands: string[] }>();
  const open = new Map<string, number>();
  const maxOpen = new Map<string, number>();
  const greyAsked = new Set<string>();
  const greyAsks = new Map<string, number>();
  const servers: SMTPServer[] = [];

  const logger = {
    debug(meta: { tnx?: string; cid?: string }, _fmt: string, line?: string) {
      if (meta?.tnx === 'command' && meta.cid && typeof line === 'string') byId.get(meta.cid)?.commands.push(line);
    },
    info() {},
    warn() {},
    error() {},
    trace() {},
    fatal() {},
    child() {
      return logger;
    },
  };

  const make = (local: string) => {
    const server: SMTPServer = new SMTPServer({
      disabledCommands: ['AUTH', 'STARTTLS'],
      authOptional: true,
      disableReverseLookup: true,
      hideENHANCEDSTATUSCODES: true,
      banner: 'test ESMTP',
      socketTimeout: 10_000,
      logger: logger as never,
      onConnect(session: SMTPServerSession, cb: (err?: Error) => void) {
        const record = { local, commands: [] as string[] };
        sessions.push(record);
        byId.set(session.id, record);
        const n = (open.get(local) ?? 0) + 1;
        open.set(local, n);
        maxOpen.set(local, Math.max(maxOpen.get(local) ?? 0, n));
        if (local === '127.0.0.3') return; // the banner never comes
        if (local === '127.0.0.4') return cb(codeError(554, '5.7.1 Client host [127.0.0.1] blocked using zen.spamhaus.org'));
        if (local === '127.0.0.5' && n > 1) {
          busyRefusals++;
          return cb(codeError(421, 'Too many concurrent SMTP connections from this IP; please try again later'));
        }
        if (local === '127.0.0.6') return void clock.setTimer(() => cb(), options.bannerDelayMs ?? 1500);
        cb();
      },
      onClose(session: SMTPServerSession) {
        if (byId.has(session.id)) open.set(local, (open.get(local) ?? 1) - 1);
      },
      onMailFrom(_address: SMTPServerAddress, _session: SMTPServerSession, cb: (err?: Error) => void) {
        cb();
      },
      onRcptTo(address: SMTPServerAddress, session: SMTPServerSession, cb: (err?: Error) => void) {
        const email = address.address;
        const at = email.lastIndexOf('@');
        const lp = email.slice(0, at).toLowerCase();
        const domain = email.slice(at + 1).toLowerCase();
        const limit = /^(o?)limit(\d+)\./.exec(domain);
        if (limit && session.envelope.rcptTo.length >= Number(limit[2])) {
          return cb(codeError(limit[1] ? 451 : 452, '4.5.3 Too many recipients'));
        }
        if (domain.startsWith('catchall.')) return cb();
        if (lp.startsWith('drop')) {
          for (const c of (server as unknown as { connections: Set<{ id: string; _socket: Socket }> }).connections) {
            if (c.id === session.id) c._socket.destroy();
          }
          return;
        }
        if (lp.startsWith('hang')) return; // the reply never comes
        if (lp.startsWith('slow')) return void clock.setTimer(() => cb(), 150);
        if (lp.startsWith('longgrey')) {
          const asked = (greyAsks.get(email) ?? 0) + 1;
          greyAsks.set(email, asked);
          if (asked <= 2) return cb(codeError(451, '4.7.1 <' + email + '>: Recipient address rejected: Greylisted, come back later'));
          return cb();
        }
        if (lp.startsWith('grey')) {
          if (!greyAsked.has(email)) {
            greyAsked.add(email);
            return cb(codeError(451, '4.7.1 <' + email + '>: Recipient address rejected: Greylisted, come back later'));
          }
          return cb();
        }
        for (const [re, code, text] of BEHAVIOURS) if (re.test(lp)) return cb(codeError(code, text.replace('%s', email)));
        // the catch-all probe (a random local part), and everyone on nomailbox.*
        if (/^x[a-z0-9]{19}$/.test(lp) || domain.startsWith('nomailbox.')) {
          return cb(codeError(550, `5.1.1 <${email}>: Recipient address rejected: User unknown in local recipient table`));
        }
        cb();
      },
      onData(stream, _session, cb) {
        // a verifier must never get here; the tests assert that no DATA was received
        stream.resume();
        stream.on('end', () => cb(codeError(554, '5.0.0 no mail wanted')));
      },
    });
    servers.push(server);
    return server;
  };

  const listen = (server: SMTPServer, host: string, port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve((server.server as unknown as { address(): AddressInfo }).address().port);
      });
    });

  // One port for all three addresses: retry with another when one of them has it taken.
  let port = 0;
  for (let attempt = 0; attempt < 10; attempt++) {
    const main = make('127.0.0.1');
    port = await listen(main, '127.0.0.1', options.port ?? 0);
    try {
      await listen(make('127.0.0.3'), '127.0.0.3', port);
      await listen(make('127.0.0.4'), '127.0.0.4', port);
      await listen(make('127.0.0.5'), '127.0.0.5', port);
      await listen(make('127.0.0.6'), '127.0.0.6', port);
      break;
    } catch (err) {
      await Promise.all(servers.splice(0).map((s) => new Promise<void>((r) => s.close(() => r()))));
      if (attempt === 9) throw err;
    }
  }

  return {
    port,
    sessions,
    open,
    maxOpen,
    commands: () => sessions.flatMap((s) => s.commands),
    get busyRefusals() {
      return busyRefusals;
    },
    close: async () => {
      for (const s of servers) {
        for (const c of (s as unknown as { connections: Set<{ _socket: Socket }> }).connections) c._socket.destroy();
      }
      await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
    },
  };
}
