import { afterEach, describe, expect, it } from 'vitest';
import { SMTPServer, type SMTPServerAddress, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { SmtpChecker, type SmtpCheckOptions } from '../../../src/engines/local/smtp/checker.js';
import { startSocksServer, type TestSocksServer } from '../../support/socks5-server.js';

// The dialogue against a real SMTP server (the smtp-server package) on
// loopback, scripted per test: a server that refuses our reverse path, one
// that wants STARTTLS, one with and one without SMTPUTF8. Each records the
// commands it received, so the tests see what was asked, and that DATA never was.

/** what a scripted server answers: undefined is 250 */
type Answer = [code: number, text: string] | undefined;

interface Script {
  mail?: (from: string, session: SMTPServerSession) => Answer;
  rcpt?: (to: string, from: string, session: SMTPServerSession) => Answer;
  options?: Partial<SMTPServerOptions>;
}

interface Scripted {
  port: number;
  /** the commands of each connection, as received */
  sessions: string[][];
  /** per MAIL FROM: whether the session was over TLS then */
  secureAtMail: boolean[];
  close(): Promise<void>;
}

const LIVE = new Set(['ann', 'bob', 'josé']);

/** RCPT answered per mailbox: LIVE exist, anything else (the catch-all probe too) is unknown */
const perMailbox = (to: string): Answer =>
  LIVE.has(to.slice(0, to.lastIndexOf('@'))) ? undefined : [550, `5.1.1 <${to}>: Recipient address rejected: User unknown in virtual mailbox table`];

/** Postfix's reject_unverified_sender with unverified_sender_reject_code = 550, as the lab's Postfix says it */
const unverified = (from: string): Answer => [
  550,
  `5.1.7 <${from}>: Sender address rejected: undeliverable address: host mx.sender.test[192.0.2.9] said: 550 5.1.1 <${from}>: Recipient address rejected: User unknown in virtual mailbox table (in reply to RCPT TO command)`,
];

const open: Scripted[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function scripted(script: Script): Promise<Scripted> {
  const sessions: string[][] = [];
  const byId = new Map<string, string[]>();
  const secureAtMail: boolean[] = [];
  const fail = (a: Answer, cb: (err?: Error) => void) => {
    if (!a) return cb();
    const err = new Error(a[1]) as Error & { responseCode: number };
    err.responseCode = a[0];
    cb(err);
  };
  const logger = {
    debug(meta: { tnx?: string; cid?: string }, _fmt: string, line?: string) {
      if (meta?.tnx === 'command' && meta.cid && typeof line === 'string') byId.get(meta.cid)?.push(line);
    },
    info() {},
    warn() {},
    error() {},
    trace() {},
    fatal() {},
    child: () => logger,
  };
  const server = new SMTPServer({
    disabledCommands: ['AUTH'],
    authOptional: true,
    disableReverseLookup: true,
    hideENHANCEDSTATUSCODES: true,
    banner: 'scripted ESMTP',
    socketTimeout: 10_000,
    logger: logger as never,
    ...script.options,
    onConnect(session, cb) {
      const commands: string[] = [];
      sessions.push(commands);
      byId.set(session.id, commands);
      cb();
    },
    onMailFrom(address: SMTPServerAddress, session, cb) {
      secureAtMail.push(session.secure);
      fail(script.mail?.(address.address, session), cb);
    },
    onRcptTo(address: SMTPServerAddress, session, cb) {
      fail((script.rcpt ?? perMailbox)(address.address, session.envelope.mailFrom ? session.envelope.mailFrom.address : '', session), cb);
    },
    onData(stream, _session, cb) {
      stream.resume();
      stream.on('end', () => cb(new Error('no mail wanted')));
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.server.address() as AddressInfo).port));
  });
  const s: Scripted = {
    port,
    sessions,
    secureAtMail,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
  open.push(s);
  return s;
}

function checker(port: number, over: Partial<SmtpCheckOptions> = {}) {
  return new SmtpChecker({
    helo: 'checker.test',
    from: '',
    port,
    timeoutMs: 3000,
    bannerTimeoutMs: 3000,
    concurrency: 4,
    perHost: 2,
    retryDelayMs: 50,
    resolveHost: async () => ['127.0.0.1'],
    onWarning: () => {},
    ...over,
  });
}

const job = (...locals: string[]) => ({ domain: 'corp.test', hosts: ['mx.corp.test'], emails: locals.map((l) => `${l}@corp.test`) });
const verbs = (commands: string[]) => commands.map((l) => l.split(/[ :]/)[0]);

describe('a refusal of the sender is not evidence about the mailbox', () => {
  it('a server that verifies the sender: asked again with <>, live mailboxes accepted, dead ones refused, the catch-all probe not fooled', async () => {
    const server = await scripted({ rcpt: (to, from) => (from !== '' ? unverified(from) : perMailbox(to)) });
    const c = checker(server.port, { from: 'verify@sender.test' });
    const found = await c.checkDomain(job('ann', 'bob', 'nobody'));
    expect(found.get('ann@corp.test')).toEqual({ mailbox: 'accepted', catchAll: false });
    expect(found.get('bob@corp.test')).toEqual({ mailbox: 'accepted', catchAll: false });
    expect(found.get('nobody@corp.test')).toEqual({ mailbox: 'refused', catchAll: false });
    // one session: the first RCPT refused for the sender, then RSET and a new transaction with <>
    expect(server.sessions).toHaveLength(1);
    const [commands] = server.sessions;
    expect(verbs(commands!)).toEqual(['EHLO', 'STARTTLS', 'EHLO', 'MAIL', 'RCPT', 'RSET', 'MAIL', 'RCPT', 'RCPT', 'RCPT', 'RCPT', 'QUIT']);
    expect(commands!.filter((l) => l.startsWith('MAIL'))).toEqual(['MAIL FROM:<verify@sender.test>', 'MAIL FROM:<>']);
    expect(server.sessions.flat().some((l) => /^DATA/i.test(l))).toBe(false);
    // the server's refusal is remembered: another domain it serves is asked with <> from the start
    const again = await c.checkDomain({ domain: 'other.test', hosts: ['mx.other.test'], emails: ['ann@other.test'] });
    expect(again.get('ann@other.test')).toEqual({ mailbox: 'accepted', catchAll: false });
    expect(server.sessions).toHaveLength(2);
    expect(server.sessions[1]!.filter((l) => l.startsWith('MAIL'))).toEqual(['MAIL FROM:<>']);
  });

  it('a sender refused at MAIL FROM: MAIL FROM:<> next, in the same session', async () => {
    const server = await scripted({ mail: (from) => (from !== '' ? [553, `5.1.8 <${from}>... Domain of sender address ${from} does not exist`] : undefined) });
    const found = await checker(server.port, { from: 'verify@nx.test' }).checkDomain(job('ann', 'nobody'));
    expect(found.get('ann@corp.test')?.mailbox).toBe('accepted');
    expect(found.get('nobody@corp.test')?.mailbox).toBe('refused');
    expect(server.sessions[0]!.filter((l) => l.startsWith('MAIL'))).toEqual(['MAIL FROM:<verify@nx.test>', 'MAIL FROM:<>']);
  });

  it('a policy refusal at RCPT: asked again with <> too', async () => {
    const server = await scripted({ rcpt: (to, from) => (from !== '' ? [554, '5.7.1 Service unavailable; sender domain has no SPF record'] : perMailbox(to)) });
    const found = await checker(server.port, { from: 'verify@sender.test' }).checkDomain(job('ann', 'nobody'));
    expect(found.get('ann@corp.test')?.mailbox).toBe('accepted');
    expect(found.get('nobody@corp.test')?.mailbox).toBe('refused');
  });

  it('refused with <> too: every row undetermined (sender-refused), none refused, no catch-all verdict', async () => {
    const atRcpt = await scripted({ rcpt: (_to, from) => unverified(from || 'MAILER-DAEMON') });
    const a = await checker(atRcpt.port, { from: 'verify@sender.test' }).checkDomain(job('ann', 'nobody'));
    for (const e of ['ann@corp.test', 'nobody@corp.test']) expect(a.get(e)).toEqual({ failure: 'sender-refused' });
    const atMail = await scripted({ mail: (from) => [553, `5.1.7 <${from}>: Sender address rejected: we do not take mail from this sender`] });
    const m = await checker(atMail.port, { from: 'verify@sender.test' }).checkDomain(job('ann'));
    expect(m.get('ann@corp.test')).toMatchObject({ failure: 'sender-refused', note: expect.stringMatching(/553 5\.1\.7/) });
    expect(atMail.sessions[0]!.filter((l) => l.startsWith('MAIL'))).toEqual(['MAIL FROM:<verify@sender.test>', 'MAIL FROM:<>']);
    expect(atMail.sessions[0]!.some((l) => l.startsWith('RCPT'))).toBe(false);
  });

  it('with the null path already (the default), a refusal of it is undetermined at once', async () => {
    const server = await scripted({ mail: () => [550, '5.7.1 <>: Sender address rejected: Access denied'] });
    const found = await checker(server.port).checkDomain(job('ann'));
    expect(found.get('ann@corp.test')).toMatchObject({ failure: 'sender-refused' });
    expect(server.sessions[0]!.filter((l) => l.startsWith('MAIL'))).toEqual(['MAIL FROM:<>']);
  });
});

describe('SMTPUTF8 (RFC 6531)', () => {
  it('asks a non-ASCII local part with MAIL FROM:<> SMTPUTF8 when the server announces it', async () => {
    const server = await scripted({});
    const found = await checker(server.port).checkDomain(job('josé', 'nadié', 'ann'));
    expect(found.get('josé@corp.test')?.mailbox).toBe('accepted');
    expect(found.get('nadié@corp.test')?.mailbox).toBe('refused');
    expect(found.get('ann@corp.test')?.mailbox).toBe('accepted');
    expect(server.sessions[0]).toContain('MAIL FROM:<> SMTPUTF8');
  });

  it('does not ask it of a server without SMTPUTF8: undetermined (no-utf8), never accepted; the rest are asked', async () => {
    const server = await scripted({ options: { hideSMTPUTF8: true } });
    const found = await checker(server.port).checkDomain(job('josé', 'ann'));
    expect(found.get('josé@corp.test')).toEqual({ failure: 'no-utf8', catchAll: false });
    expect(found.get('ann@corp.test')?.mailbox).toBe('accepted');
    const rcpts = server.sessions.flat().filter((l) => l.startsWith('RCPT'));
    expect(rcpts.some((l) => l.includes('jos'))).toBe(false);
    expect(server.sessions.flat().filter((l) => l.startsWith('MAIL'))).toEqual(['MAIL FROM:<>']);
  });
});

describe('STARTTLS (RFC 3207)', () => {
  it('is used when offered, and EHLO is said again over TLS', async () => {
    const server = await scripted({});
    const found = await checker(server.port).checkDomain(job('ann', 'nobody'));
    expect(found.get('ann@corp.test')?.mailbox).toBe('accepted');
    expect(found.get('nobody@corp.test')?.mailbox).toBe('refused');
    expect(verbs(server.sessions[0]!).slice(0, 4)).toEqual(['EHLO', 'STARTTLS', 'EHLO', 'MAIL']);
    expect(server.secureAtMail).toEqual([true]);
  });

  it('a server that wants it without offering it (530 5.7.0 at MAIL FROM) is not read as blocking the checker', async () => {
    const server = await scripted({
      options: { hideSTARTTLS: true },
      mail: (_from, session) => (session.secure ? undefined : [530, '5.7.0 Must issue a STARTTLS command first']),
    });
    const found = await checker(server.port).checkDomain(job('ann', 'nobody'));
    expect(found.get('ann@corp.test')?.mailbox).toBe('accepted');
    expect(found.get('nobody@corp.test')?.mailbox).toBe('refused');
    expect(verbs(server.sessions[0]!).slice(0, 5)).toEqual(['EHLO', 'MAIL', 'STARTTLS', 'EHLO', 'MAIL']);
  });

  it('--smtp-tls require: a server that does not offer it is not asked', async () => {
    const server = await scripted({ options: { disabledCommands: ['AUTH', 'STARTTLS'] } });
    const found = await checker(server.port, { tls: 'require' }).checkDomain(job('ann'));
    expect(found.get('ann@corp.test')).toMatchObject({ failure: 'unreachable', note: expect.stringMatching(/no STARTTLS/) });
    expect(server.sessions.flat().some((l) => /^(MAIL|RCPT)/.test(l))).toBe(false);
  });

  /** A server that offers STARTTLS, says 220, then answers the handshake with plain text; it answers per mailbox in plain text. */
  async function brokenTls(): Promise<{ port: number; sessions: string[][]; close(): Promise<void> }> {
    const sessions: string[][] = [];
    const raw: Server = createServer((socket) => {
      const commands: string[] = [];
      sessions.push(commands);
      socket.write('220 raw ESMTP\r\n');
      let buffer = '';
      socket.on('data', (chunk) => {
        buffer += chunk.toString('latin1');
        for (let nl; (nl = buffer.indexOf('\r\n')) >= 0; ) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 2);
          commands.push(line);
          const rcpt = /^RCPT TO:<(.*)>$/.exec(line);
          if (line.startsWith('EHLO')) socket.write('250-raw\r\n250 STARTTLS\r\n');
          else if (line === 'STARTTLS') {
            socket.write('220 go ahead\r\n');
            socket.once('data', () => socket.end('this is no TLS\r\n'));
            return;
          } else if (rcpt) socket.write(perMailbox(rcpt[1]!) ? '550 5.1.1 no such user\r\n' : '250 ok\r\n');
          else if (line === 'QUIT') socket.end('221 bye\r\n');
          else socket.write('250 ok\r\n');
        }
      });
      socket.on('error', () => {});
    });
    await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
    return { port: (raw.address() as AddressInfo).port, sessions, close: () => new Promise((r) => raw.close(() => r())) };
  }

  it("a failed TLS handshake: asked again in plain text, as MTAs do; that server's later sessions skip STARTTLS", async () => {
    const raw = await brokenTls();
    try {
      const c = checker(raw.port);
      const found = await c.checkDomain(job('ann', 'nobody'));
      expect(found.get('ann@corp.test')).toEqual({ mailbox: 'accepted', catchAll: false });
      expect(found.get('nobody@corp.test')).toEqual({ mailbox: 'refused', catchAll: false });
      expect(raw.sessions.map(verbs)).toEqual([
        ['EHLO', 'STARTTLS'],
        ['EHLO', 'MAIL', 'RCPT', 'RCPT', 'RCPT', 'QUIT'],
      ]);
      const again = await c.checkDomain({ domain: 'other.test', hosts: ['mx.other.test'], emails: ['bob@other.test'] });
      expect(again.get('bob@other.test')?.mailbox).toBe('accepted');
      expect(raw.sessions.map(verbs)[2]).toEqual(['EHLO', 'MAIL', 'RCPT', 'RCPT', 'QUIT']);
    } finally {
      await raw.close();
    }
  });

  it('--smtp-tls require: a failed TLS handshake leaves the rows undetermined, never refused, and nothing is asked in plain text', async () => {
    const raw = await brokenTls();
    try {
      const found = await checker(raw.port, { tls: 'require' }).checkDomain(job('ann'));
      expect(found.get('ann@corp.test')).toMatchObject({ failure: 'unreachable', note: expect.stringMatching(/TLS/) });
      expect(raw.sessions).toEqual([['EHLO checker.test', 'STARTTLS']]);
    } finally {
      await raw.close();
    }
  });

  describe('through a SOCKS5 proxy', () => {
    let socks: TestSocksServer | undefined;
    afterEach(async () => {
      await socks?.close();
    });

    it('upgrades the proxied connection', async () => {
      socks = await startSocksServer();
      const server = await scripted({});
      const found = await checker(server.port, { tls: 'require', proxy: { host: '127.0.0.1', port: socks.port, remoteDns: false } }).checkDomain(
        job('ann', 'nobody'),
      );
      expect(found.get('ann@corp.test')?.mailbox).toBe('accepted');
      expect(found.get('nobody@corp.test')?.mailbox).toBe('refused');
      expect(socks.connects).toEqual([`127.0.0.1:${server.port}`]);
      expect(server.secureAtMail).toEqual([true]);
    });
  });
});
