import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { waitFor } from './wait.js';
import { throwawayCert } from './throwaway-cert.js';

/**
 * A real Postfix (Debian's package) for the mailbox check's end-to-end tests:
 * its own config_directory, queue_directory and data_directory in a temp
 * directory, listening on loopback addresses only (127.0.20.x:25; distinct
 * addresses are distinct MX hosts), with virtual mailboxes (the ones in
 * `mailboxes` exist, any other gets 550 5.1.1) and one smtpd per address:
 *   127.0.20.1  plain
 *   127.0.20.2  smtpd_recipient_limit = 3 (452 4.5.3 Error: too many recipients)
 *   127.0.20.3  smtpd_client_connection_count_limit = 1 (421 4.7.0 too many connections),
 *               its greeting a second late
 *   127.0.20.4  greylisting by a real postgrey (policy service), delay `greyDelaySeconds`
 *   127.0.20.5  postscreen in front, holding its greeting `greetWaitSeconds`
 *               from a client it has not seen pass lately (a tarpit)
 *   127.0.20.6  a small TCP proxy to 127.0.20.1 that holds the server's
 *               greeting `holdSeconds`, every time (a tarpit that never relents)
 *   127.0.20.9  nothing listens: a dead MX host
 *   127.0.20.20 smtpd_hard_error_limit = 3: after its third error reply the
 *               server sends `421 4.7.0 Error: too many errors` unasked and
 *               closes (an anti-harvest limit, as Exim's "Too many failed
 *               recipients" ACL is)
 *   127.0.20.21 smtpd_client_connection_count_limit = 2, for one server
 *               address behind several host names
 *   127.0.20.22 plain, the live second address of a host whose first is dead
 * and, for how replies are read (REPLIES):
 *   127.0.20.10 reject_unverified_sender with a 550: Postfix probes the
 *               sender's domain (PROBED_DOMAIN, routed to 127.0.20.11) and
 *               refuses every RCPT quoting that server's "User unknown"
 *   127.0.20.11 plain, under another name: the server the sender probe asks
 *   127.0.20.12 smtpd_tls_security_level = encrypt (a throwaway certificate
 *               made by openssl at start): nothing before STARTTLS
 *   127.0.20.13 smtputf8_enable = yes (announces SMTPUTF8)
 *   127.0.20.14 smtputf8_enable = no
 *   127.0.20.15 as 127.0.20.10, and the null sender refused too (an access map on `<>`)
 * and the same again (TWIN_LAB, TWIN_REPLIES: 127.0.20.50-62; no 127.0.20.6
 * proxy, the same postgrey, the same 127.0.20.11 behind the sender probes) for
 * a second set of tests run at the same time in the same lab: each set counts
 * sessions and reads replies on addresses only it dials.
 * It needs root (port 25, Postfix's own users); `postfixMissing()` says why
 * the suite cannot run, for a visible skip. `stop()` ends everything started
 * (also when start failed half-way) and removes the directory.
 */
export const LAB = {
  plain: '127.0.20.1',
  limit: '127.0.20.2',
  conn: '127.0.20.3',
  grey: '127.0.20.4',
  tarpit: '127.0.20.5',
  hold: '127.0.20.6',
  dead: '127.0.20.9',
  errors: '127.0.20.20',
  conn2: '127.0.20.21',
  second: '127.0.20.22',
};

/** The listeners for how replies are read (see above); kept apart from LAB's. */
export const REPLIES = {
  verifySender: '127.0.20.10',
  probed: '127.0.20.11',
  tls: '127.0.20.12',
  utf8: '127.0.20.13',
  noUtf8: '127.0.20.14',
  strictSender: '127.0.20.15',
};

/** LAB's listeners again, configured alike, for a set of tests run beside LAB's (see above) */
export const TWIN_LAB = {
  plain: '127.0.20.50',
  limit: '127.0.20.51',
  conn: '127.0.20.52',
  grey: '127.0.20.53',
  tarpit: '127.0.20.54',
  dead: LAB.dead,
  errors: '127.0.20.55',
  conn2: '127.0.20.56',
  second: '127.0.20.57',
};

/** REPLIES's listeners again, for the set of tests beside LAB's; the sender probes' server is the one */
export const TWIN_REPLIES = {
  verifySender: '127.0.20.58',
  probed: REPLIES.probed,
  tls: '127.0.20.59',
  utf8: '127.0.20.60',
  noUtf8: '127.0.20.61',
  strictSender: '127.0.20.62',
};

/**
 * The listeners of the harder lab (test/engines/local/smtp-lab.cases.ts),
 * configured as hosting providers and companies configure Postfix:
 *   127.0.20.30 a gateway that verifies each recipient (reject_unverified_recipient,
 *               550): "undeliverable address: unknown user" for a dead mailbox
 *   127.0.20.31 `sleep` before every RCPT reply (`delaySeconds`): a server
 *               slower than the checker's reply timeout (as Exim's `delay`)
 *   127.0.20.32 offers STARTTLS, and its TLS handshake fails (its only cipher
 *               is one no client offers): MTAs then go on in plain text
 *   127.0.20.33 a dead mailbox refused with a 450 (unknown_virtual_mailbox_reject_code)
 *   127.0.20.34 a relay-only backup MX: accepts every address of `relayDomains`
 *   127.0.20.35 a gateway that knows its recipients (relay_recipient_maps:
 *               `relayRecipients`), for a domain of `relayDomains`
 *   127.0.20.36 opportunistic STARTTLS (smtpd_tls_security_level = may)
 *   127.0.20.37 an error tarpit: from the first error on, each error reply
 *               waits a second (smtpd_soft_error_limit = 1, smtpd_error_sleep_time)
 *   127.0.20.38 refuses the sender's domain by an access map (5.7.1 Sender
 *               address rejected: Access denied)
 *   127.0.20.39 at most 3 connections a minute from one client
 *               (smtpd_client_connection_rate_limit): the next get a 421
 */
export const HARD = {
  gateway: '127.0.20.30',
  delay: '127.0.20.31',
  tlsBroken: '127.0.20.32',
  softUnknown: '127.0.20.33',
  backupRelay: '127.0.20.34',
  recipientList: '127.0.20.35',
  tlsMay: '127.0.20.36',
  errorSleep: '127.0.20.37',
  senderBlock: '127.0.20.38',
  connRate: '127.0.20.39',
};

/** every address the lab's own listeners take (the 127.0.20.6 proxy's too) */
const LISTENERS = [
  ...new Set([
    ...Object.values(LAB).filter((a) => a !== LAB.dead),
    ...Object.values(REPLIES),
    ...Object.values(HARD),
    ...Object.values(TWIN_LAB).filter((a) => a !== LAB.dead),
    ...Object.values(TWIN_REPLIES),
  ]),
];

/** the domain whose addresses 127.0.20.10 verifies as senders: it has no mailbox, so every one is undeliverable */
export const PROBED_DOMAIN = 'sender.lab.test';

const POSTFIX = '/usr/sbin/postfix';
const POSTGREY = '/usr/sbin/postgrey';

/** Why the real-Postfix suite cannot run here, or undefined when it can. */
export function postfixMissing(): string | undefined {
  if (process.platform !== 'linux') return 'not Linux';
  if (!existsSync(POSTFIX)) return `${POSTFIX} is not installed (apt-get install postfix postgrey)`;
  if (!existsSync(POSTGREY)) return `${POSTGREY} is not installed (apt-get install postgrey)`;
  if (spawnSync('openssl', ['version']).status !== 0) return 'openssl is not installed (apt-get install openssl): the lab makes a certificate for STARTTLS';
  if (userInfo().uid !== 0) return 'not root (Postfix binds port 25 and runs as its own users)';
  if (spawnSync('id', ['postfix']).status !== 0) return 'no postfix user';
  return undefined;
}

/** What the lab's log shows, from some point on. */
export interface LabLog {
  /** Postfix's log, for a failing test to show */
  log(): string;
  /** per host address: smtpd sessions seen in all, and the most open at once (from the log) */
  sessions(): Map<string, { total: number; maxOpen: number }>;
}

export interface PostfixLab extends LabLog {
  dir: string;
  /**
   * The log from now on, once every smtpd session open now has ended: a set
   * of tests counts its sessions and looks for its servers' replies in its own
   * part of the log, not in the readiness probes' sessions (the whole log holds
   * one per host, which a "second session" would count) nor in what a set run
   * before it on the same hosts did. (Sets run at the same time are kept apart
   * by their listeners, LAB's and TWIN_LAB's, not by this.)
   */
  fromNow(): Promise<LabLog>;
  stop(): Promise<void>;
}

export interface LabOptions {
  /** local@domain addresses that exist; domains are taken from them; `@domain` makes a catch-all domain */
  mailboxes: readonly string[];
  /** domains every listener relays (accepts any address of) without knowing its mailboxes: a backup MX's */
  relayDomains?: readonly string[];
  /** how long 127.0.20.31 sleeps before each RCPT reply */
  delaySeconds?: number;
  /** the addresses of `relayDomains` 127.0.20.35 knows (any other is refused) */
  relayRecipients?: readonly string[];
  greyDelaySeconds?: number;
  greetWaitSeconds?: number;
  holdSeconds?: number;
}

/**
 * One lab for several sets of tests (a lab's start-up costs seconds, and its
 * fixed addresses let only one run at a time): their mailboxes and relayed
 * domains together, each timing the one they agree on. Throws where one
 * lab cannot serve them all — a timing set two ways, a domain a catch-all
 * for one set and a list of mailboxes for another, a relayed domain whose
 * mailboxes another set has the lab know. (Two sets may list different
 * mailboxes of one domain: each set's dead addresses must then be none of
 * the other's live ones.)
 */
export function labFor(...sets: LabOptions[]): LabOptions {
  const one = <K extends 'delaySeconds' | 'greyDelaySeconds' | 'greetWaitSeconds' | 'holdSeconds'>(key: K): LabOptions[K] => {
    const values = [...new Set(sets.map((o) => o[key]).filter((v) => v !== undefined))];
    if (values.length > 1) throw new Error(`the sets sharing a Postfix lab want ${key} ${values.join(' and ')}: one lab has one`);
    return values[0];
  };
  const union = (lists: (readonly string[] | undefined)[]) => [...new Set(lists.flatMap((l) => l ?? []))];
  const mailboxes = union(sets.map((o) => o.mailboxes));
  const relayDomains = union(sets.map((o) => o.relayDomains));
  const domainOf = (m: string) => m.slice(m.lastIndexOf('@') + 1);
  const catchAll = new Set(mailboxes.filter((m) => m.startsWith('@')).map(domainOf));
  for (const m of mailboxes) {
    const domain = domainOf(m);
    if (!m.startsWith('@') && catchAll.has(domain))
      throw new Error(`${domain} is a catch-all for one set sharing the Postfix lab and has listed mailboxes (${m}) for another`);
    if (relayDomains.includes(domain)) throw new Error(`${domain} is relayed for one set sharing the Postfix lab and has mailboxes (${m}) for another`);
  }
  const out: LabOptions = { mailboxes, relayDomains, relayRecipients: union(sets.map((o) => o.relayRecipients)) };
  for (const key of ['delaySeconds', 'greyDelaySeconds', 'greetWaitSeconds', 'holdSeconds'] as const) {
    const value = one(key);
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/**
 * Labs of one machine take turns (a lab binds fixed addresses). The suite
 * starts one, in one file (test/engines/local/postfix-lab-e2e.test.ts, for
 * every set of cases: a second file's lab would leave a vitest worker blocked
 * on this lock for the first's whole run); two `vitest run`s of one worktree,
 * or a lab started by hand, still wait here: the kernel lock on this file, taken by
 * flock(1) on a descriptor kept open until the lab stops, as src/owner.ts
 * takes its locks. Released by the kernel however the holder dies. (Runs of
 * other worktrees are kept apart by the outer `flock /tmp/postfix-lab.lock`.)
 */
const TURN = join(tmpdir(), 'mailsift-postfix-lab.turn');

async function takeTurn(waitSeconds: number): Promise<() => Promise<void>> {
  writeFileSync(TURN, '', { flag: 'a' });
  const fh = await open(TURN, 'r');
  const locked = await new Promise<boolean>((resolve) => {
    // the descriptor is the child's fd 3: the lock is on our open file description, not the child's
    const child = spawn('flock', ['-x', '-w', String(waitSeconds), '3'], { stdio: ['ignore', 'ignore', 'ignore', fh.fd] });
    child.once('error', () => resolve(false));
    child.once('exit', (code) => resolve(code === 0));
  });
  if (!locked) {
    await fh.close();
    throw new Error(`another Postfix lab of this suite held ${TURN} for ${waitSeconds} s (or flock(1) is missing)`);
  }
  let ended = false;
  return async () => {
    if (ended) return;
    ended = true;
    await fh.close();
  };
}

export async function startPostfixLab(o: LabOptions): Promise<PostfixLab> {
  const endTurn = await takeTurn(45);
  const dir = mkdtempSync(join(tmpdir(), 'mailsift-postfix-'));
  // Postfix's and postgrey's own users must reach their directories inside
  chmodSync(dir, 0o755);
  const etc = join(dir, 'etc');
  const data = join(dir, 'data');
  const greyDb = join(dir, 'postgrey');
  for (const d of [etc, data, join(dir, 'spool'), join(dir, 'mail'), greyDb]) mkdirSync(d, { recursive: true });
  const uid = (name: string) => Number(spawnSync('id', ['-u', name], { encoding: 'utf8' }).stdout.trim());
  const gid = (name: string) => Number(spawnSync('id', ['-g', name], { encoding: 'utf8' }).stdout.trim());
  chownSync(data, uid('postfix'), gid('postfix'));
  chownSync(join(dir, 'mail'), uid('postfix'), gid('postfix'));
  const hasPostgreyUser = spawnSync('id', ['postgrey']).status === 0;
  if (hasPostgreyUser) chownSync(greyDb, uid('postgrey'), gid('postgrey'));

  let greyPort = 0;
  const children: ChildProcess[] = [];
  let started = false;
  const sockets = new Set<Socket>();
  let holder: Server | undefined;
  const stop = async () => {
    for (const s of sockets) s.destroy();
    if (holder) await new Promise((r) => holder!.close(r));
    if (started) {
      const master = masterPid(dir);
      spawnSync(POSTFIX, ['-c', etc, 'stop'], { stdio: 'ignore', timeout: 20_000 });
      // start-fg runs the master as a child of postfix-script, which the SIGTERM below
      // does not reach: when `postfix stop` fails or times out (a loaded machine), the
      // master would live on, holding the lab's addresses for every later run
      if (master !== undefined) await endProcess(master);
    }
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
    await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : undefined)));
    if (!process.env.MAILSIFT_KEEP_LAB) rmSync(dir, { recursive: true, force: true });
    await endTurn();
  };

  try {
    // a lab still running (an earlier run's, another worktree's) would answer in this one's place
    for (const addr of LISTENERS) {
      if (await listening(addr, 25))
        throw new Error(
          `${addr}:25 is already taken: another Postfix lab is running (run the suite under flock /tmp/postfix-lab.lock; a leaked one shows in ss -ltnp)`,
        );
    }
    // postgrey first: Postfix asks it for every RCPT on the greylisting host
    greyPort = await freePort();
    writeFileSync(join(dir, 'grey-empty'), '');
    const grey = spawn(
      POSTGREY,
      [
        `--inet=127.0.0.1:${greyPort}`,
        `--dbdir=${greyDb}`,
        `--delay=${o.greyDelaySeconds ?? 2}`,
        `--pidfile=${join(dir, 'postgrey.pid')}`,
        `--whitelist-clients=${join(dir, 'grey-empty')}`,
        `--whitelist-recipients=${join(dir, 'grey-empty')}`,
        '--auto-whitelist-clients=0',
        ...(hasPostgreyUser ? [] : ['--user=root', '--group=root']),
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let greyErr = '';
    grey.stderr!.on('data', (d: Buffer) => (greyErr = (greyErr + d.toString()).slice(-2000)));
    children.push(grey);
    await waitForPort('127.0.0.1', greyPort, 15_000, () => grey.exitCode).catch((err: Error) => {
      throw new Error(`${err.message}: ${greyErr}`);
    });

    const replies = replyListeners(etc);
    const hard = hardListeners(etc, o);
    const domains = [...new Set(o.mailboxes.map((m) => m.slice(m.lastIndexOf('@') + 1)))];
    // `@domain`: every local part of it goes to one mailbox (a catch-all)
    writeFileSync(
      join(etc, 'vmailbox'),
      o.mailboxes.map((m) => `${m} ${m.slice(m.lastIndexOf('@') + 1)}/${m.slice(0, m.lastIndexOf('@')) || 'all'}/\n`).join(''),
    );
    writeFileSync(
      join(etc, 'main.cf'),
      [
        'compatibility_level = 3.6',
        `queue_directory = ${join(dir, 'spool')}`,
        `data_directory = ${data}`,
        'mail_owner = postfix',
        'myhostname = mx.lab.test',
        'mydestination =',
        // explicit addresses in master.cf; this only keeps Postfix off every other interface
        'inet_interfaces = loopback-only',
        'inet_protocols = ipv4',
        `maillog_file = ${join(dir, 'maillog')}`,
        `maillog_file_prefixes = ${dir}`,
        'smtpd_banner = $myhostname ESMTP',
        'smtpd_peername_lookup = no',
        'biff = no',
        `virtual_mailbox_domains = ${[...domains, PROBED_DOMAIN].join(' ')}`,
        `virtual_mailbox_maps = texthash:${join(etc, 'vmailbox')}`,
        `virtual_mailbox_base = ${join(dir, 'mail')}`,
        `virtual_uid_maps = static:${uid('postfix')}`,
        `virtual_gid_maps = static:${gid('postfix')}`,
        'smtpd_recipient_restrictions = reject_unauth_destination',
        `grey_restrictions = reject_unauth_destination, check_policy_service inet:127.0.0.1:${greyPort}`,
        // LAB's one-connection host greets a second late (smtpd_delay_reject = no: before the banner), so that
        // a second domain of the list on it always finds the first session open and meets the limit, however
        // fast the first would be over on an idle machine and however late the second comes on a busy one (the
        // postfix set asserts the refusal; its twin, whose set does not, answers at once)
        'conn_restrictions = sleep 1, permit',
        'alias_maps =',
        'alias_database =',
        // the connection-count limit is to bite loopback clients too
        'smtpd_client_event_limit_exceptions =',
        'anvil_rate_time_unit = 60s',
        // postscreen: no exemption for loopback, the greeting held, then smtpd
        'postscreen_access_list =',
        'postscreen_greet_action = ignore',
        `postscreen_greet_wait = ${o.greetWaitSeconds ?? 3}s`,
        `postscreen_greet_banner = $smtpd_banner`,
        // a client that waited once is let straight through for this long: each session waits again
        'postscreen_greet_ttl = 1s',
        ...replies.mainCf,
        ...hard.mainCf,
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(etc, 'master.cf'),
      [
        ...labListeners(LAB, 'smtpd'),
        ...labListeners(TWIN_LAB, 'smtpd-twin'),
        'dnsblog unix - - n - 0 dnsblog',
        'pickup unix n - n 60 1 pickup',
        'cleanup unix n - n - 0 cleanup',
        'qmgr unix n - n 300 1 qmgr',
        'rewrite unix - - n - - trivial-rewrite',
        'bounce unix - - n - 0 bounce',
        'defer unix - - n - 0 bounce',
        'trace unix - - n - 0 bounce',
        'verify unix - - n - 1 verify',
        'proxymap unix - - n - - proxymap',
        'error unix - - n - - error',
        'retry unix - - n - - error',
        'discard unix - - n - - discard',
        'virtual unix - n n - - virtual',
        'anvil unix - - n - 1 anvil',
        'scache unix - - n - 1 scache',
        'postlog unix-dgram n - n - 1 postlogd',
        ...replies.masterCf,
        ...hard.masterCf,
        '',
      ].join('\n'),
    );
    // in the foreground, as our child: it cannot outlive the test run unnoticed
    const master = spawn(POSTFIX, ['-c', etc, 'start-fg'], { stdio: 'ignore' });
    children.push(master);
    started = true;
    // all but the proxy, which starts last
    const probed = LISTENERS.filter((addr) => addr !== LAB.hold);
    for (const addr of probed) {
      await waitForPort(addr, 25, 20_000, () => master.exitCode).catch((err: Error) => {
        throw new Error(`postfix did not start: ${err.message}\n${readLog(dir)}`);
      });
    }
    // Each probe above was a session of smtpd's, logged when a process got to it: under
    // load, after a test's own sessions began, where it would count as one of theirs. The
    // lab is ready once every probed smtpd has logged its session's end.
    const smtpd = probed.filter((addr) => addr !== LAB.tarpit && addr !== TWIN_LAB.tarpit);
    await waitFor(
      () => {
        const log = readLog(dir);
        const seen = countSessions(log);
        return smtpd.every((addr) => (seen.get(addr)?.total ?? 0) > 0) && openSessions(log) === 0;
      },
      { what: 'the readiness probes to end in the log', timeoutMs: 20_000, intervalMs: 50 },
    ).catch((err: Error) => {
      throw new Error(`postfix did not start: ${err.message}\n${readLog(dir)}`);
    });
    holder = await holdGreeting(LAB.hold, LAB.plain, (o.holdSeconds ?? 5) * 1000, sockets);
  } catch (err) {
    await stop();
    throw err;
  }
  const from = (offset: number): LabLog => ({ log: () => readLog(dir, offset), sessions: () => countSessions(readLog(dir, offset)) });
  const fromNow = async (): Promise<LabLog> => {
    await waitFor(() => openSessions(readLog(dir)) === 0, { what: "every open session of the lab's to end in its log", timeoutMs: 20_000, intervalMs: 50 });
    return from(logBytes(dir));
  };
  return { dir, ...from(0), fromNow, stop };
}

/** A master.cf smtpd on `addr`:25. Each host logs under its own name (postfix/<addr>/smtpd), so sessions can be counted per host. */
const svc = (addr: string, extra = '') => `${addr}:25 inet n - n - - smtpd -o syslog_name=postfix/${addr}${extra}`;

/**
 * The master.cf lines of LAB's listeners, or TWIN_LAB's: `pass` names the
 * smtpd their postscreen hands a client to. Each postscreen has a cache of its
 * own (a client that passed one is new to the other) and logs under its
 * address, as each smtpd does.
 */
function labListeners(l: typeof TWIN_LAB, pass: string): string[] {
  return [
    svc(l.plain),
    svc(l.limit, ' -o smtpd_recipient_limit=3'),
    svc(l.conn, ` -o smtpd_client_connection_count_limit=1${l === LAB ? ' -o smtpd_delay_reject=no -o smtpd_client_restrictions=$conn_restrictions' : ''}`),
    svc(l.grey, ' -o smtpd_recipient_restrictions=$grey_restrictions'),
    svc(l.errors, ' -o smtpd_hard_error_limit=3'),
    svc(l.conn2, ' -o smtpd_client_connection_count_limit=2'),
    svc(l.second),
    `${l.tarpit}:25 inet n - n - 1 postscreen -o syslog_name=postfix/${l.tarpit} -o smtpd_service_name=${pass} -o postscreen_cache_map=btree:$data_directory/postscreen-${l.tarpit}`,
    `${pass} pass - - n - - smtpd -o syslog_name=postfix/${l.tarpit}`,
  ];
}

/**
 * The main.cf and master.cf lines of the REPLIES listeners (and TWIN_REPLIES's), and their
 * throwaway certificate (openssl, a P-256 key: made in a few milliseconds).
 */
function replyListeners(etc: string): { mainCf: string[]; masterCf: string[] } {
  const { cert, key } = throwawayCert(etc, 'mx-tls.lab.test');
  writeFileSync(join(etc, 'transport'), `${PROBED_DOMAIN} smtp:[${REPLIES.probed}]:25\n`);
  writeFileSync(join(etc, 'null-sender'), '<> REJECT null sender not accepted here\n');
  const asked = (r: typeof REPLIES) => [
    svc(r.verifySender, ' -o smtpd_sender_restrictions=reject_unverified_sender -o unverified_sender_reject_code=550'),
    // loglevel 1: the log says when a session went over TLS
    svc(r.tls, ' -o smtpd_tls_security_level=encrypt -o smtpd_tls_loglevel=1'),
    svc(r.utf8, ' -o smtputf8_enable=yes'),
    svc(r.noUtf8, ' -o smtputf8_enable=no'),
    svc(r.strictSender, ' -o smtpd_sender_restrictions=$strict_sender_restrictions -o unverified_sender_reject_code=550'),
  ];
  return {
    mainCf: [
      `transport_maps = texthash:${join(etc, 'transport')}`,
      // a probe's answer is waited for in the RCPT (1 s, 3 times) instead of a 450 "verification in progress"
      'address_verify_poll_delay = 1s',
      `smtpd_tls_cert_file = ${cert}`,
      `smtpd_tls_key_file = ${key}`,
      `strict_sender_restrictions = reject_unverified_sender, check_sender_access texthash:${join(etc, 'null-sender')}`,
    ],
    masterCf: [
      ...asked(REPLIES),
      ...asked(TWIN_REPLIES),
      // another name, or the sender probe's client would see its own name and call it a mail loop
      svc(REPLIES.probed, ' -o myhostname=mx-probed.lab.test'),
      'smtp unix - - n - - smtp',
      'tlsmgr unix - - n 1000? 1 tlsmgr',
    ],
  };
}

/** The main.cf and master.cf lines of the HARD listeners (see above). */
function hardListeners(etc: string, o: LabOptions): { mainCf: string[]; masterCf: string[] } {
  writeFileSync(join(etc, 'relay-recipients'), (o.relayRecipients ?? []).map((r) => `${r} OK\n`).join(''));
  writeFileSync(join(etc, 'sender-block'), `${PROBED_DOMAIN} REJECT Access denied\n`);
  return {
    mainCf: [
      `relay_domains = ${(o.relayDomains ?? []).join(' ')}`,
      `delay_restrictions = sleep ${o.delaySeconds ?? 5}, reject_unauth_destination`,
      'verify_restrictions = reject_unauth_destination, reject_unverified_recipient',
      // no client offers a NULL cipher, and TLS 1.3's suites are not offered: every handshake fails
      'broken_tls_ciphers = eNULL',
      `known_recipients = texthash:${join(etc, 'relay-recipients')}`,
      `block_sender_restrictions = check_sender_access texthash:${join(etc, 'sender-block')}`,
    ],
    masterCf: [
      svc(HARD.gateway, ' -o smtpd_reject_unlisted_recipient=no -o smtpd_recipient_restrictions=$verify_restrictions -o unverified_recipient_reject_code=550'),
      svc(HARD.delay, ' -o smtpd_recipient_restrictions=$delay_restrictions'),
      svc(
        HARD.tlsBroken,
        ' -o smtpd_tls_security_level=may -o smtpd_tls_loglevel=1 -o smtpd_tls_protocols=<=TLSv1.2 -o smtpd_tls_ciphers=high -o tls_high_cipherlist=$broken_tls_ciphers',
      ),
      svc(HARD.softUnknown, ' -o unknown_virtual_mailbox_reject_code=450'),
      svc(HARD.backupRelay, ''),
      svc(HARD.recipientList, ' -o relay_recipient_maps=$known_recipients'),
      svc(HARD.tlsMay, ' -o smtpd_tls_security_level=may -o smtpd_tls_loglevel=1'),
      svc(HARD.errorSleep, ' -o smtpd_soft_error_limit=1 -o smtpd_error_sleep_time=1s'),
      svc(HARD.senderBlock, ' -o smtpd_sender_restrictions=$block_sender_restrictions'),
      svc(HARD.connRate, ' -o smtpd_client_connection_rate_limit=3'),
    ],
  };
}

/** smtpd sessions whose `connect from` has no `disconnect from` yet, over every host. */
function openSessions(log: string): number {
  const open = new Set<string>();
  for (const m of log.matchAll(/postfix\/([\d.]+)\/smtpd\[(\d+)\]: (connect|disconnect) from/g)) {
    if (m[3] === 'connect') open.add(`${m[1]} ${m[2]}`);
    else open.delete(`${m[1]} ${m[2]}`);
  }
  return open.size;
}

/** `postfix/<addr>/smtpd[pid]: connect from` … `disconnect from`: sessions per host, and the most at once. */
export function countSessions(log: string): Map<string, { total: number; maxOpen: number }> {
  const out = new Map<string, { total: number; maxOpen: number; open: Set<string> }>();
  for (const m of log.matchAll(/postfix\/([\d.]+)\/smtpd\[(\d+)\]: (connect|disconnect) from/g)) {
    const [, host, pid, what] = m as unknown as [string, string, string, string];
    let h = out.get(host);
    if (!h) out.set(host, (h = { total: 0, maxOpen: 0, open: new Set() }));
    if (what === 'connect') {
      h.total++;
      h.open.add(pid);
      h.maxOpen = Math.max(h.maxOpen, h.open.size);
    } else h.open.delete(pid);
  }
  return new Map([...out].map(([k, v]) => [k, { total: v.total, maxOpen: v.maxOpen }]));
}

/** Postfix's log from byte `offset` on (the log only grows) */
function readLog(dir: string, offset = 0): string {
  try {
    return readFileSync(join(dir, 'maillog')).subarray(offset).toString('utf8');
  } catch {
    return '';
  }
}

function logBytes(dir: string): number {
  try {
    return statSync(join(dir, 'maillog')).size;
  } catch {
    return 0;
  }
}

/** A TCP proxy on `from`:25 to `to`:25 that holds the server's first bytes (its greeting) `ms`. */
async function holdGreeting(from: string, to: string, ms: number, sockets: Set<Socket>): Promise<Server> {
  const server = createServer((client) => {
    const up = connect({ host: to, port: 25 });
    for (const s of [client, up]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        up.destroy();
      });
    }
    const held: Buffer[] = [];
    let open = false;
    up.on('data', (d: Buffer) => (open ? client.write(d) : held.push(d)));
    const timer = setTimeout(() => {
      open = true;
      for (const d of held) client.write(d);
      client.pipe(up);
    }, ms);
    client.on('close', () => {
      clearTimeout(timer);
      up.destroy();
    });
    up.on('end', () => client.end());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(25, from, () => resolve());
  });
  return server;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s: Server = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** The lab's master daemon, from the pid file it writes in its queue directory. */
function masterPid(dir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dir, 'spool', 'pid', 'master.pid'), 'utf8').trim());
    return Number.isInteger(pid) && pid > 1 ? pid : undefined;
  } catch {
    return undefined;
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** SIGTERM (the master ends its daemons), then SIGKILL after 5 s; bounded. */
async function endProcess(pid: number): Promise<void> {
  if (!alive(pid)) return;
  process.kill(pid, 'SIGTERM');
  await waitFor(() => !alive(pid), { what: `process ${pid} to end on SIGTERM`, timeoutMs: 5000, intervalMs: 100 }).catch(() => undefined);
  if (alive(pid)) process.kill(pid, 'SIGKILL');
}

/** Whether something accepts connections on host:port now. */
function listening(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s: Socket = connect({ host, port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Resolves once a TCP connection to host:port opens; bounded in time. */
async function waitForPort(host: string, port: number, ms: number, exited?: () => number | null): Promise<void> {
  const up = async (): Promise<boolean> => {
    if (await listening(host, port)) return true;
    if (exited?.() != null) throw new Error(`the server for ${host}:${port} exited`);
    return false;
  };
  await waitFor(up, { what: `something to listen on ${host}:${port}`, timeoutMs: ms, intervalMs: 100 });
}
