import { describe, expect, it } from 'vitest';
import { classifyRcpt, classifyStep, type RcptOutcome } from '../../../src/engines/local/smtp/classify.js';
import { ReplyError, ReplyParser, parseReplyLines } from '../../../src/engines/local/smtp/reply.js';
import { providerRule } from '../../../src/engines/local/smtp/providers.js';

const reply = (line: string) => {
  const r = new ReplyParser().push(`${line}\r\n`);
  expect(r).toHaveLength(1);
  return r[0]!;
};

describe('reply parsing', () => {
  it('joins multi-line replies and reads the enhanced code once', () => {
    const p = new ReplyParser();
    expect(p.push('250-mx.example.com at your service\r\n250-PIPE')).toEqual([]);
    expect(p.push('LINING\r\n250 8BITMIME\r\n550 5.1.1 no such user\r\n')).toEqual([
      { code: 250, text: 'mx.example.com at your service PIPELINING 8BITMIME' },
      { code: 550, enhanced: '5.1.1', text: 'no such user' },
    ]);
  });

  it('takes an enhanced code only when its class matches the reply', () => {
    expect(parseReplyLines(550, ['4.2.2 odd'])).toEqual({ code: 550, text: '4.2.2 odd' });
    expect(parseReplyLines(452, ['4.2.2 full'])).toEqual({ code: 452, enhanced: '4.2.2', text: 'full' });
    expect(reply('250')).toEqual({ code: 250, text: '' });
  });

  it('refuses what is not SMTP', () => {
    expect(() => new ReplyParser().push('HTTP/1.1 400 Bad Request\r\n')).toThrow(ReplyError);
    expect(() => new ReplyParser().push('250-a\r\n550 b\r\n')).toThrow(/changed its code/);
    expect(() => new ReplyParser().push('2'.repeat(9000))).toThrow(/8 KiB/);
  });
});

// Real replies (as quoted by verification projects and MTA docs) → what they say of the mailbox.
const TABLE: [string, RcptOutcome][] = [
  ['250 2.1.5 Ok', 'accepted'],
  ['251 2.1.5 User not local; will forward', 'accepted'],
  ['550 5.1.1 <x@example.com>: Recipient address rejected: User unknown in local recipient table', 'refused'],
  ["550-5.1.1 The email account that you tried to reach does not exist.\r\n550 5.1.1 Please try double-checking the recipient's address", 'refused'],
  ['550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup', 'refused'],
  ['550 User unknown', 'refused'],
  ['553 sorry, no mailbox here by that name', 'refused'],
  ['551 User not local; please try <forward@example.org>', 'unclear'],
  ['550 Requested action not taken: mailbox unavailable', 'refused'],
  ['554 5.2.1 mailbox disabled', 'refused'],
  ['550 5.2.1 The email account that you tried to reach is disabled', 'refused'],
  ['552 5.2.2 Mailbox full', 'full'],
  ['552 Requested mail action aborted: exceeded storage allocation', 'full'],
  ['452 4.2.2 The email account that you tried to reach is over quota', 'full'],
  ['550 5.5.0 mailbox full', 'full'],
  ['452 4.5.3 Too many recipients', 'too-many'],
  ['452 Too many recipients received this hour', 'too-many'],
  ['552 5.5.3 Too many recipients', 'too-many'],
  ['451 4.7.1 <x@example.com>: Recipient address rejected: Greylisted, come back later', 'temporary'],
  ['450 4.2.0 <x@example.com>: Recipient address rejected: Greylisted', 'temporary'],
  ['451 Temporary local problem - please try later', 'temporary'],
  ['421 4.7.0 Try again later, closing connection', 'closing'],
  ['554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using zen.spamhaus.org', 'blocked'],
  ['550 5.7.1 Recipient not authorized, your IP has been found on a block list', 'blocked'],
  ['550 5.7.606 Access denied, banned sending IP [192.0.2.1]', 'blocked'],
  ['550 Client host rejected: cannot find your reverse hostname, [192.0.2.1]', 'blocked'],
  ['554 Your access to this mail system has been rejected due to the sending MTA\'s poor reputation', 'blocked'],
  ['550 5.7.1 Relaying denied', 'blocked'],
  // a mailbox phrase in a reply that is also about the sender's IP: not evidence
  ['550 5.1.1 User unknown; also your IP address is listed at dnsbl.example', 'blocked'],
  ['550 Rejected', 'unclear'],
  ['500 5.5.1 Command unrecognized', 'unclear'],
  ['354 go ahead', 'unclear'],
];

describe('RCPT reply classification', () => {
  it.each(TABLE)('%s → %s', (line, outcome) => {
    expect(classifyRcpt(reply(line))).toBe(outcome);
  });

  it('reads the banner, EHLO and MAIL FROM replies as go on, later, blocked or failed', () => {
    expect(classifyStep(reply('220 mx.example.com ESMTP'))).toBe('ok');
    expect(classifyStep(reply('421 4.3.2 busy, try later'))).toBe('temporary');
    expect(classifyStep(reply('554 5.7.1 Client host [192.0.2.1] blocked using Spamhaus'))).toBe('blocked');
    expect(classifyStep(reply('554 No SMTP service here'))).toBe('blocked');
    expect(classifyStep(reply('553 5.1.8 bad sender address'))).toBe('failed');
  });
});

describe('providers whose SMTP answers cannot be trusted', () => {
  it('matches by domain and by MX host suffix', () => {
    expect(providerRule('yahoo.com', [])?.rule).toBe('accepts-all');
    expect(providerRule('example.org', ['mta5.am0.yahoodns.net'])?.name).toBe('Yahoo');
    expect(providerRule('example.org', ['mx.example.org'])).toBeUndefined();
  });
});
