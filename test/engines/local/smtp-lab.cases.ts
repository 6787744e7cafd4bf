import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startDnsServer, type TestDnsServer, type Zone } from '../../support/dns-server.js';
import { reply, startScriptedServer, type ScriptedServer } from '../../support/lab-smtp.js';
import { HARD, PROBED_DOMAIN, TWIN_LAB, TWIN_REPLIES, type LabLog, type LabOptions, type PostfixLab } from '../../support/postfix.js';
import { runCli } from '../../support/run-cli.js';

// A harder mail lab: one mixed list of addresses, each with its known truth,
// through `validate --engine local --smtp`, against real Postfix listeners
// configured as hosting providers and companies configure them
// (test/support/postfix.ts: TWIN_LAB and TWIN_REPLIES, LAB's and REPLIES's
// listeners again on addresses of their own, and HARD) and, for what Postfix cannot
// be made to do (Exim's ACLs, appliances' replies, IPv6), SMTP scripts on
// their own loopback addresses (test/support/lab-smtp.ts). It asserts what
// the issue's judge asks of the check: at least 98% of statuses right, no
// live mailbox `invalid`, never more than 2 sessions open at once to one
// server address (Postfix's own log, the scripts' own count), no DATA.
// Run by test/engines/local/postfix-lab-e2e.test.ts, in the lab it starts once
// for these cases and smtp-postfix.cases.ts's, at the same time as those
// (needs root; skipped with a notice otherwise).

type Status = 'valid' | 'invalid' | 'risky' | 'unknown';

/**
 * The lab's addresses by domain: which mailboxes exist (`live`) and which do
 * not (`dead`), and the statuses a right answer may have for each (the
 * check's rules: docs/offline-engine.md). Where the server cannot be asked
 * or says nothing of the mailbox, the right answer is `unknown`, never a guess.
 */
interface Domain {
  mx: string[];
  live: string[];
  dead: string[];
  /** the right status of a live mailbox; valid when absent */
  liveIs?: Status[];
  /** the right status of a dead one; invalid when absent */
  deadIs?: Status[];
  /** what the server is, for the report of a wrong row */
  about: string;
}

/** Mail servers by name: their addresses (the lab's, the scripts', ::1) */
const HOSTS: Record<string, Zone> = {
  'mx.corp.lab.test': { a: [TWIN_LAB.plain] },
  'mx.limit.lab.test': { a: [TWIN_LAB.limit] },
  'mx.conn.lab.test': { a: [TWIN_LAB.conn] },
  'mx.grey.lab.test': { a: [TWIN_LAB.grey] },
  'mx.screen.lab.test': { a: [TWIN_LAB.tarpit] },
  'mx.dead.lab.test': { a: [TWIN_LAB.dead] },
  'mx.errors.lab.test': { a: [TWIN_LAB.errors] },
  'mx.names.lab.test': { a: [TWIN_LAB.conn2] },
  'alias.names.lab.test': { cname: 'mx.names.lab.test' },
  'mail.names3.test': { a: [TWIN_LAB.conn2] },
  'mx.multi.lab.test': { a: [TWIN_LAB.dead, TWIN_LAB.second] },
  'mx.verify.lab.test': { a: [TWIN_REPLIES.verifySender] },
  'mx.strict.lab.test': { a: [TWIN_REPLIES.strictSender] },
  'mx.tls.lab.test': { a: [TWIN_REPLIES.tls] },
  'mx.utf8.lab.test': { a: [TWIN_REPLIES.utf8] },
  'mx.noutf8.lab.test': { a: [TWIN_REPLIES.noUtf8] },
  'mx.gateway.lab.test': { a: [HARD.gateway] },
  'mx1.slow.lab.test': { a: [HARD.delay] },
  'mx2.slow.lab.test': { a: [HARD.delay] },
  'mx3.slow.lab.test': { a: [HARD.delay] },
  'mx.oldtls.lab.test': { a: [HARD.tlsBroken] },
  'mx.soft.lab.test': { a: [HARD.softUnknown] },
  'mx.backup.lab.test': { a: [HARD.backupRelay] },
  'mx.list.lab.test': { a: [HARD.recipientList] },
  'mx.may.lab.test': { a: [HARD.tlsMay] },
  'mx.sleepy.lab.test': { a: [HARD.errorSleep] },
  'mx.senderblock.lab.test': { a: [HARD.senderBlock] },
  'mx1.rate.lab.test': { a: [HARD.connRate] },
  'mx2.rate.lab.test': { a: [HARD.connRate] },
  'mx3.rate.lab.test': { a: [HARD.connRate] },
  'mx4.rate.lab.test': { a: [HARD.connRate] },
  'mx.exim.lab.test': { a: ['127.0.20.40'] },
  'mx.appliance.lab.test': { a: ['127.0.20.41'] },
  'mx.longgrey.lab.test': { a: ['127.0.20.42'] },
  'mx.misc.lab.test': { a: ['127.0.20.43'] },
  'mx.blocked.lab.test': { a: ['127.0.20.44'] },
  'mx.v6.lab.test': { aaaa: ['::1'] },
  // IPv4 dead, IPv6 alive: the AAAA is tried next
  'mx.dual.lab.test': { a: [TWIN_LAB.dead], aaaa: ['::1'] },
  'mx.old.lab.test': { a: ['127.0.20.45'] },
  // a provider whose RCPT answers prove nothing (providers.ts): never dialled
  'mta5.am0.yahoodns.net': { a: ['127.0.20.9'] },
};

const n = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i + 1}`);
const UNKNOWN: Status[] = ['unknown'];

const DOMAINS: Record<string, Domain> = {
  // a company's or a host's Postfix: virtual mailboxes, 550 5.1.1 for the rest
  'acme.test': { mx: ['mx.corp.lab.test'], live: ['ann', 'bob', 'cy', 'di', 'ed'], dead: ['ghost', 'j.smith'], about: 'Postfix' },
  'globex.test': { mx: ['mx.corp.lab.test'], live: ['hank', 'marge', 'frank', 'mona'], dead: ['homer'], about: 'Postfix' },
  'initech.test': { mx: ['mx.corp.lab.test'], live: ['peter', 'milton', 'bill'], dead: ['samir'], about: 'Postfix' },
  'umbrella.test': { mx: ['mx.corp.lab.test'], live: ['alice', 'rain', 'chad', 'matt', 'kaplan'], dead: ['spence', 'lisa'], about: 'Postfix' },
  'hooli.test': {
    mx: ['mx.corp.lab.test'],
    live: ['gavin', 'jared', 'dinesh'],
    dead: ['info'],
    about: 'Postfix (a role address that does not exist is invalid)',
  },
  'pied.test': { mx: ['mx.corp.lab.test'], live: ['postmaster'], dead: [], liveIs: ['risky'], about: 'Postfix (a role mailbox is risky)' },
  // a hosting provider's customers on one MX host
  ...Object.fromEntries(
    ['shop1', 'shop2', 'shop3', 'shop4'].map((d) => [
      `${d}.test`,
      { mx: ['mx.corp.lab.test'], live: ['owner'], dead: ['former'], about: 'Postfix, one of its hosted domains' },
    ]),
  ),
  'catchall.test': { mx: ['mx.corp.lab.test'], live: ['anyone', 'ann', 'zzz'], dead: [], liveIs: ['risky'], about: 'Postfix, a catch-all domain' },
  'bigco.test': { mx: ['mx.limit.lab.test'], live: n('u', 7), dead: ['gone1', 'gone2'], about: 'Postfix, smtpd_recipient_limit = 3' },
  // one server that takes one connection at a time, three MX lists
  'small1.test': { mx: ['mx.conn.lab.test'], live: ['ann', 'bob'], dead: ['ghost'], about: 'Postfix, one connection at a time' },
  'small2.test': { mx: ['mx.conn.lab.test', 'mx.dead.lab.test'], live: ['ann', 'bob'], dead: ['ghost'], about: 'Postfix, one connection at a time' },
  'small3.test': { mx: ['mx.conn.lab.test', 'mx.corp.lab.test'], live: ['ann', 'bob'], dead: ['ghost'], about: 'Postfix, one connection at a time' },
  'grey.test': { mx: ['mx.grey.lab.test'], live: ['ann', 'bob', 'cy'], dead: ['ghost'], about: 'Postfix + postgrey (2 s)' },
  'screened.test': { mx: ['mx.screen.lab.test'], live: ['ann', 'bob'], dead: ['ghost'], about: 'postscreen holding its greeting 3 s' },
  'gone1.test': { mx: ['mx.dead.lab.test'], live: ['ann'], dead: ['ghost'], liveIs: UNKNOWN, deadIs: UNKNOWN, about: 'a dead MX' },
  'gone2.test': { mx: ['mx.dead.lab.test'], live: ['ann'], dead: ['ghost'], liveIs: UNKNOWN, deadIs: UNKNOWN, about: 'a dead MX' },
  'harvest.test': { mx: ['mx.errors.lab.test'], live: n('u', 10), dead: n('ghost', 5), about: 'Postfix, smtpd_hard_error_limit = 3' },
  // three names of one server that allows 2 connections at once
  'names1.test': { mx: ['mx.names.lab.test'], live: ['ann', 'bob', 'cy'], dead: ['ghost'], about: 'one server, three names' },
  'names2.test': { mx: ['alias.names.lab.test'], live: ['ann', 'bob', 'cy'], dead: ['ghost'], about: 'one server, three names' },
  'names3.test': { mx: ['mail.names3.test'], live: ['ann', 'bob', 'cy'], dead: ['ghost'], about: 'one server, three names' },
  'multi.test': { mx: ['mx.multi.lab.test'], live: ['ann', 'bob'], dead: ['ghost'], about: 'an MX host whose first address is dead' },
  'verify.test': { mx: ['mx.verify.lab.test'], live: ['ann', 'bob'], dead: ['ghost'], about: 'Postfix, reject_unverified_sender (550)' },
  'strict.test': {
    mx: ['mx.strict.lab.test'],
    live: ['ann'],
    dead: ['zed'],
    liveIs: UNKNOWN,
    deadIs: UNKNOWN,
    about: 'Postfix, reject_unverified_sender and <> refused',
  },
  'tls.test': { mx: ['mx.tls.lab.test'], live: ['ann', 'bob'], dead: ['ghost'], about: 'Postfix, smtpd_tls_security_level = encrypt' },
  'utf8.test': { mx: ['mx.utf8.lab.test'], live: ['josé', 'ann'], dead: ['nadié'], about: 'Postfix, smtputf8_enable = yes' },
  'noutf8.test': { mx: ['mx.noutf8.lab.test'], live: ['ann'], dead: ['ghost'], about: 'Postfix, smtputf8_enable = no' },
  'noutf8b.test': {
    mx: ['mx.noutf8.lab.test'],
    live: ['josé'],
    dead: [],
    liveIs: UNKNOWN,
    about: 'Postfix, smtputf8_enable = no: a non-ASCII local part cannot be asked',
  },
  'gw.test': { mx: ['mx.gateway.lab.test'], live: ['ann', 'bob', 'cy'], dead: ['ghost', 'old.staff'], about: 'Postfix gateway, reject_unverified_recipient' },
  // a server slower than --smtp-timeout, first in three MX lists whose backups differ (three groups, dialled at once)
  'slow1.test': {
    mx: ['mx1.slow.lab.test'],
    live: ['ann'],
    dead: ['ghost'],
    liveIs: UNKNOWN,
    deadIs: UNKNOWN,
    about: 'Postfix sleeping 5 s before each RCPT reply',
  },
  'slow2.test': {
    mx: ['mx2.slow.lab.test', 'mx.dead.lab.test'],
    live: ['ann'],
    dead: ['ghost'],
    liveIs: UNKNOWN,
    deadIs: UNKNOWN,
    about: 'Postfix sleeping 5 s before each RCPT reply',
  },
  'slow3.test': {
    mx: ['mx3.slow.lab.test', 'mx.backup.lab.test'],
    live: ['ann'],
    dead: ['ghost'],
    liveIs: UNKNOWN,
    deadIs: UNKNOWN,
    about: 'Postfix sleeping 5 s before each RCPT reply',
  },
  'oldtls.test': { mx: ['mx.oldtls.lab.test'], live: ['ann', 'bob', 'cy'], dead: ['ghost'], about: 'Postfix offering STARTTLS whose handshake fails' },
  'soft.test': {
    mx: ['mx.soft.lab.test'],
    live: ['ann', 'bob'],
    dead: ['ghost', 'zed'],
    deadIs: UNKNOWN,
    about: 'Postfix refusing unknown mailboxes with 450',
  },
  // the primary is down, the backup relays anything: accepted is no proof
  'backup-relay.test': {
    mx: ['mx.dead.lab.test', 'mx.backup.lab.test'],
    live: ['ann', 'bob'],
    dead: ['ghost'],
    liveIs: ['risky', 'unknown'],
    deadIs: ['risky', 'unknown'],
    about: 'primary down, a relay-only backup MX',
  },
  // the primary defers every recipient; the backup relays anything: a 4xx is no reason to ask the backup
  'tempfail.test': {
    mx: ['mx.misc.lab.test', 'mx.backup.lab.test'],
    live: ['ann', 'bob'],
    dead: ['ghost'],
    liveIs: UNKNOWN,
    deadIs: UNKNOWN,
    about: 'primary 451 4.3.0, a relay-only backup MX',
  },
  'exim.test': {
    mx: ['mx.exim.lab.test'],
    live: n('user', 8),
    dead: n('old', 6),
    about: 'Exim: sender callout, "Too many failed recipients" drop, 2 connections per IP',
  },
  'appliance.test': {
    mx: ['mx.appliance.lab.test'],
    live: ['ann', 'bob', 'cy'],
    dead: ['ghost', 'zed'],
    deadIs: UNKNOWN,
    about: 'an appliance answering "550 5.7.1 No such user"',
  },
  'longgrey.test': {
    mx: ['mx.longgrey.lab.test'],
    live: ['ann', 'bob'],
    dead: ['ghost'],
    liveIs: UNKNOWN,
    deadIs: UNKNOWN,
    about: 'greylisting past the retry',
  },
  'misc.test': {
    mx: ['mx.misc.lab.test'],
    live: ['ann', 'bob'],
    dead: ['ghost', 'disabled.jane', 'moved.max'],
    about: 'disabled (5.2.1), moved (5.1.6), unknown (5.1.1)',
  },
  'full.test': { mx: ['mx.misc.lab.test'], live: ['full.ed', 'quota.flo'], dead: [], liveIs: ['risky'], about: 'mailbox full (552 5.2.2, 452 4.2.2)' },
  'blocked.test': {
    mx: ['mx.blocked.lab.test'],
    live: ['ann'],
    dead: ['ghost'],
    liveIs: UNKNOWN,
    deadIs: UNKNOWN,
    about: 'a 554 5.7.1 greeting: the checker is blocked',
  },
  'partner.test': { mx: ['mx.list.lab.test'], live: ['ann', 'bob', 'cy'], dead: ['ghost', 'temp'], about: 'Postfix gateway with relay_recipient_maps' },
  'starttls.test': { mx: ['mx.may.lab.test'], live: ['ann', 'bob', 'cy'], dead: ['ghost'], about: 'Postfix, smtpd_tls_security_level = may' },
  'sleepy.test': {
    mx: ['mx.sleepy.lab.test'],
    live: ['ann', 'bob', 'cy'],
    dead: ['ghost', 'zed', 'quinn'],
    about: 'Postfix, each error reply after the first delayed 1 s',
  },
  'blocksender.test': {
    mx: ['mx.senderblock.lab.test'],
    live: ['ann', 'bob', 'cy'],
    dead: ['ghost'],
    about: "Postfix refusing the checker's sender domain (5.7.1 Access denied)",
  },
  // a server taking 3 connections a minute from one client, behind four MX names
  ...Object.fromEntries(
    [1, 2, 3, 4].map((i) => [
      `rate${i}.test`,
      { mx: [`mx${i}.rate.lab.test`], live: ['ann'], dead: ['ghost'], about: 'Postfix, 3 connections a minute per client, four MX names' },
    ]),
  ),
  'dual.test': { mx: ['mx.dual.lab.test'], live: ['ann', 'bob'], dead: ['ghost'], about: 'an MX host whose IPv4 address is dead and IPv6 alive' },
  'old.test': { mx: ['mx.old.lab.test'], live: ['ann', 'bob'], dead: ['ghost'], about: 'an old server: a multi-line greeting, HELO only' },
  'yahoo-hosted.test': {
    mx: ['mta5.am0.yahoodns.net'],
    live: ['ann'],
    dead: ['ghost'],
    liveIs: UNKNOWN,
    deadIs: UNKNOWN,
    about: 'a provider that accepts every address at RCPT time',
  },
  'v6.test': { mx: ['mx.v6.lab.test'], live: ['ann', 'bob', 'cy'], dead: ['ghost'], about: 'an IPv6-only MX' },
};

/** domains the Postfix lab holds mailboxes for (the scripts know theirs themselves) */
const POSTFIX_DOMAINS = Object.keys(DOMAINS).filter(
  (d) =>
    ![
      'exim.test',
      'appliance.test',
      'longgrey.test',
      'misc.test',
      'full.test',
      'blocked.test',
      'v6.test',
      'dual.test',
      'old.test',
      'yahoo-hosted.test',
      'tempfail.test',
      'backup-relay.test',
      'catchall.test',
      'partner.test',
    ].includes(d),
);

/**
 * Rows DNS, syntax and the lists decide before any mail server is asked, as
 * real lists have them: their zones (`implicit.test` has an A record and no
 * MX: its mailboxes are the plain Postfix's).
 */
const DNS_ROWS: { email: string; right: Status; live: boolean; about: string }[] = [
  { email: 'ann@implicit.test', right: 'valid', live: true, about: 'no MX, an A record: the implicit MX (Postfix)' },
  { email: 'ghost@implicit.test', right: 'invalid', live: false, about: 'no MX, an A record: the implicit MX (Postfix)' },
  { email: 'ann@nullmx.test', right: 'invalid', live: false, about: 'a null MX (RFC 7505)' },
  { email: 'ann@no-such-domain.test', right: 'invalid', live: false, about: 'NXDOMAIN' },
  { email: 'ann@nomail.test', right: 'invalid', live: false, about: 'neither MX nor A' },
  { email: 'ann@mailinator.com', right: 'risky', live: true, about: 'a disposable domain: not dialled' },
  { email: 'ann..smith@acme.test', right: 'invalid', live: false, about: 'bad syntax' },
  { email: 'ann.acme.test', right: 'invalid', live: false, about: 'no @' },
];
const DNS_ZONES: Record<string, Zone> = {
  'implicit.test': { a: [TWIN_LAB.plain] },
  'nullmx.test': { mx: [{ exchange: '', priority: 0 }] },
  'nomail.test': {},
  'mailinator.com': { mx: [{ exchange: 'mx.dead.lab.test', priority: 10 }] },
};
const RELAYED = ['backup-relay.test', 'tempfail.test', 'partner.test'];

interface Row {
  email: string;
  live: boolean;
  right: Status[];
  about: string;
}

/** The list: every domain's addresses, interleaved as a list sorted by signup date has them (seeded, so each run is the same) */
function lab(): Row[] {
  const rows: Row[] = [];
  for (const [domain, d] of Object.entries(DOMAINS)) {
    for (const l of d.live) rows.push({ email: `${l}@${domain}`, live: true, right: d.liveIs ?? ['valid'], about: d.about });
    for (const l of d.dead) rows.push({ email: `${l}@${domain}`, live: false, right: d.deadIs ?? ['invalid'], about: d.about });
  }
  for (const r of DNS_ROWS) rows.push({ email: r.email, live: r.live, right: [r.right], about: r.about });
  // the same mailboxes again, as people typed them
  rows.push({ email: 'Ann@acme.test', live: true, right: ['valid'], about: 'Postfix, a duplicate in other case' });
  rows.push({ email: 'BOB@Acme.TEST', live: true, right: ['valid'], about: 'Postfix, a duplicate in other case' });
  let seed = 37;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = rows.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [rows[i], rows[j]] = [rows[j]!, rows[i]!];
  }
  return rows;
}

const live = (domain: string) => new Set(DOMAINS[domain]!.live.map((l) => `${l}@${domain}`));

/** Exim 4 with the ACLs hosting providers run: sender callout, a drop after 3 failed recipients, 2 connections per IP */
const EXIM_CALLOUT = reply(
  550,
  `Verification failed for <verify@${PROBED_DOMAIN}>`,
  `Called:   ${TWIN_REPLIES.probed}`,
  `Sent:     RCPT TO:<verify@${PROBED_DOMAIN}>`,
  `Response: 550 5.1.1 <verify@${PROBED_DOMAIN}>: Recipient address rejected: User unknown in virtual mailbox table`,
  'Sender verify failed',
);

async function startScripts(): Promise<ScriptedServer[]> {
  const exim = live('exim.test');
  const appliance = live('appliance.test');
  const misc = live('misc.test');
  const v6 = new Set([...live('v6.test'), ...live('dual.test')]);
  const old = live('old.test');
  const started = await Promise.allSettled([
    startScriptedServer('127.0.20.40', {
      banner: (open) =>
        open > 2
          ? '421 mx.exim.lab.test Too many concurrent SMTP connections from this IP address; please try again later'
          : '220 mx.exim.lab.test ESMTP Exim 4.96 Mon, 01 Jan 2024 00:00:00 +0000',
      extensions: ['SIZE 52428800', '8BITMIME', 'PIPELINING', 'PRDR', 'HELP'],
      rcpt: (to, from, failed) => {
        if (failed >= 3) return { drop: '550 Too many failed recipients' };
        if (from !== '') return EXIM_CALLOUT;
        return exim.has(to) ? '250 Accepted' : '550 Unrouteable address';
      },
    }),
    startScriptedServer('127.0.20.41', {
      banner: () => '220 mail.appliance.lab.test ESMTP',
      extensions: ['SIZE', '8BITMIME', 'ENHANCEDSTATUSCODES'],
      rcpt: (to) => (appliance.has(to) ? '250 2.1.5 Recipient OK' : `550 5.7.1 <${to}>: No such user here`),
    }),
    startScriptedServer('127.0.20.42', {
      banner: () => '220 mx.longgrey.lab.test ESMTP',
      rcpt: () => '451 4.7.1 Greylisted: please try again in 300 seconds',
    }),
    startScriptedServer('127.0.20.43', {
      banner: () => '220 mx.misc.lab.test ESMTP',
      extensions: ['SIZE', 'ENHANCEDSTATUSCODES'],
      rcpt: (to) => {
        const local = to.slice(0, to.lastIndexOf('@'));
        if (to.endsWith('@tempfail.test')) return '451 4.3.0 Temporary lookup failure';
        if (local.startsWith('disabled'))
          return reply(
            550,
            '5.2.1 The email account that you tried to reach is disabled. Learn more at',
            '5.2.1  https://support.google.com/mail/?p=DisabledUser x1si2',
          );
        if (local.startsWith('moved')) return '551 5.1.6 User has moved; please try <max@elsewhere.test>';
        if (local.startsWith('full')) return '552 5.2.2 Mailbox full';
        if (local.startsWith('quota')) return '452 4.2.2 Mailbox over quota';
        return misc.has(to) ? '250 2.1.5 OK' : `550 5.1.1 <${to}>: Recipient address rejected: User unknown in local recipient table`;
      },
    }),
    startScriptedServer('127.0.20.44', {
      banner: () => '554 5.7.1 mx.blocked.lab.test: Client host [127.0.0.1] blocked using zen.spamhaus.org',
      rcpt: () => '250 OK',
    }),
    startScriptedServer('127.0.20.45', {
      banner: () => reply(220, 'mx.old.lab.test Sendmail 8.9.3/8.9.3; Mon, 1 Jan 2024 00:00:00 GMT', 'This server is old. Be kind.'),
      extensions: false,
      rcpt: (to) => (old.has(to) ? `250 <${to}>... Recipient ok` : `550 <${to}>... User unknown`),
    }),
    startScriptedServer('::1', {
      banner: () => '220 mx.v6.lab.test ESMTP',
      rcpt: (to) => (v6.has(to) ? '250 2.1.5 OK' : `550 5.1.1 <${to}>: Recipient address rejected: User unknown`),
    }),
  ]);
  const up = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await Promise.all(up.map((s) => s.close()));
    throw new Error(`a lab server could not listen (the lab needs 127.0.20.40-45 and ::1, port 25): ${(failed as PromiseRejectedResult).reason}`);
  }
  return up;
}

/** the lab's listeners these cases dial: the log is read on their lines alone (the cases beside these dial LAB and REPLIES at once, into the same log) */
const OWN = new Set([...Object.values(TWIN_LAB), ...Object.values(TWIN_REPLIES), ...Object.values(HARD)]);
const ownLines = (log: string) =>
  log
    .split('\n')
    .filter((line) => OWN.has(/postfix\/([\d.]+)\//.exec(line)?.[1] ?? ''))
    .join('\n');

/** what these cases need of the lab (test/support/postfix.ts labFor: the lab they share) */
export const LAB_CASES_LAB: LabOptions = {
  mailboxes: [...POSTFIX_DOMAINS.flatMap((d) => DOMAINS[d]!.live.map((l) => `${l}@${d}`)), '@catchall.test', 'ann@implicit.test'],
  relayDomains: RELAYED,
  relayRecipients: [...live('partner.test')],
  greyDelaySeconds: 2,
  greetWaitSeconds: 3,
  delaySeconds: 5,
};

/**
 * Declares these cases, in the lab `started()` gives; they read its log from
 * their own start on (`fromNow`: not the readiness probes' sessions), on their
 * own listeners' lines (smtp-postfix.cases.ts's run beside them).
 */
export function labCases(started: () => PostfixLab): void {
  let postfix: LabLog;
  let scripts: ScriptedServer[] = [];
  let dns: TestDnsServer;
  let dir: string;

  describe.sequential('the mail lab: a mixed list against Postfix and Exim as providers configure them', () => {
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'mailsift-lab-'));
      const zones: Record<string, Zone> = { ...HOSTS, ...DNS_ZONES };
      for (const [domain, d] of Object.entries(DOMAINS)) zones[domain] = { mx: d.mx.map((exchange, i) => ({ exchange, priority: 10 * (i + 1) })) };
      [postfix, scripts, dns] = await Promise.all([started().fromNow(), startScripts(), startDnsServer({ zones })]);
    }, 60_000);
    afterAll(async () => {
      await Promise.all([...scripts.map((s) => s.close()), dns?.close()]);
      if (dir) rmSync(dir, { recursive: true, force: true });
    }, 60_000);

    // the test's own expect: it runs beside smtp-postfix.cases.ts's, where the global one cannot tell which test a soft failure is of
    it('statuses right on >= 98% of the list, no live mailbox invalid, never more than 2 sessions open to one server, no DATA', async ({ expect }) => {
      const rows = lab();
      const input = join(dir, 'list.txt');
      writeFileSync(input, rows.map((r) => r.email).join('\n') + '\n');
      const started = Date.now();
      const r = await runCli(
        [
          'validate',
          input,
          '--engine',
          'local',
          '--dns-server',
          dns.address,
          '--smtp',
          '--smtp-port',
          '25',
          '--smtp-helo',
          'checker.lab.test',
          '--smtp-from',
          `verify@${PROBED_DOMAIN}`,
          '--smtp-timeout',
          '3000',
          '--smtp-retry-delay',
          '3',
          '--smtp-budget',
          '30',
          '--format',
          'json',
          '-q',
        ],
        { timeoutMs: 90_000 },
      );
      const seconds = (Date.now() - started) / 1000;
      expect(r.stderr).not.toMatch(/at .*\.js/);
      expect(r.code, r.stderr).toBe(0);
      const results = JSON.parse(r.stdout).results as { email: string; status: Status; reason: string }[];
      expect(results.map((x) => x.email)).toEqual(rows.map((x) => x.email));
      const wrong = results.flatMap((res, i) => {
        const row = rows[i]!;
        return row.right.includes(res.status)
          ? []
          : [`${res.email}: ${res.status} (${res.reason || 'no reason'}), right: ${row.right.join(' or ')} — ${row.about}`];
      });
      const right = (results.length - wrong.length) / results.length;
      console.log(
        `mail lab: ${results.length - wrong.length}/${results.length} statuses right (${(right * 100).toFixed(1)}%) in ${seconds.toFixed(1)} s${wrong.length ? `\n  ${wrong.join('\n  ')}` : ''}`,
      );
      // refused for a reason the server gave: disabled (5.2.1), moved (5.1.6)
      const reason = (email: string) => results.find((x) => x.email === email)?.reason;
      expect
        .soft([reason('disabled.jane@misc.test'), reason('moved.max@misc.test'), reason('ghost@misc.test')])
        .toEqual(['mailbox_disabled', 'mailbox_disabled', 'mailbox_not_found']);
      const liveInvalid = results.filter((res, i) => rows[i]!.live && res.status === 'invalid').map((res) => res.email);
      expect.soft(liveInvalid).toEqual([]);
      expect.soft(right, wrong.join('\n')).toBeGreaterThanOrEqual(0.98);

      // never more than 2 sessions open at once to one server address, as each server saw them
      const log = ownLines(postfix.log());
      const sessions = [...postfix.sessions()].filter(([host]) => OWN.has(host));
      console.log(
        `most sessions open at once: ${sessions.map(([h, s]) => `${h} ${s.maxOpen}/${s.total}`).join(', ')}; ${scripts.map((s) => `${s.host} ${s.maxOpen}/${s.sessions.length}`).join(', ')}`,
      );
      for (const [host, s] of sessions) expect.soft(s.maxOpen, host).toBeLessThanOrEqual(2);
      for (const s of scripts) expect.soft(s.maxOpen, s.host).toBeLessThanOrEqual(2);
      // no DATA: Postfix names every command of a session at its end (data=, bdat=), the scripts record theirs
      expect(log).toMatch(/disconnect from .* rcpt=/);
      expect(log).not.toMatch(/disconnect from .* (data|bdat)=/);
      for (const s of scripts)
        expect(
          s.sessions.flat().filter((c) => /^(DATA|BDAT)\b/i.test(c)),
          s.host,
        ).toEqual([]);
      expect.soft(seconds).toBeLessThanOrEqual(20);
    }, 120_000);
  });
}
