import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isIpv4, isIpv6, parseAddress } from '../../src/codec/syntax.js';

/**
 * The isemail 3.05 corpus (a copy of shared/corpora, BSD licence beside it, so
 * the tests need nothing outside the repository), decoded as the corpora README
 * says.
 */
function loadCorpus(): { id: string; address: string; category: string }[] {
  const xml = readFileSync(new URL('../fixtures/isemail-tests.xml', import.meta.url), 'utf8');
  const decode = (s: string) =>
    s
      .replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => {
        const c = parseInt(hex, 16);
        // control characters are written as U+2400 + their code
        return String.fromCodePoint(c >= 0x2400 && c < 0x2420 ? c - 0x2400 : c);
      })
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&apos;/g, "'")
      .replace(/&amp;/g, '&');
  return xml
    .split('<test id="')
    .slice(1)
    .map((block) => {
      const address = /<address\/>|<address>([\s\S]*?)<\/address>/.exec(block);
      return {
        id: /^\d+/.exec(block)![0],
        address: decode(address?.[1] ?? ''),
        category: /<category>(\w+)<\/category>/.exec(block)![1]!,
      };
    });
}

// the policy of the corpora README: what an SMTP server accepts as a mailbox
const ACCEPTED = new Set(['ISEMAIL_VALID_CATEGORY', 'ISEMAIL_DNSWARN', 'ISEMAIL_RFC5321']);
const corpus = loadCorpus();

describe('isemail corpus', () => {
  it('has the 164 cases the README counts', () => {
    expect(corpus).toHaveLength(164);
  });
  it.each(corpus)('#$id $category $address', ({ address, category }) => {
    expect(parseAddress(address) !== undefined).toBe(ACCEPTED.has(category));
  });
});

describe('internationalised addresses (RFC 6531, IDNA)', () => {
  it.each([
    ['josé@example.com', 'example.com'],
    ['пользователь@почта.рф', 'xn--80a1acny.xn--p1ai'],
    ['user@bücher.de', 'xn--bcher-kva.de'],
    ['user@BÜCHER.de', 'xn--bcher-kva.de'],
    ['"josé smith"@example.com', 'example.com'],
    ['test@xn--hxajbheg2az3al.xn--jxalpdlp', 'xn--hxajbheg2az3al.xn--jxalpdlp'],
  ])('%s is accepted, domain %s', (address, domain) => {
    expect(parseAddress(address)?.domain).toBe(domain);
  });

  it('gives the ASCII form of a Chinese IDN domain', () => {
    expect(parseAddress('用户@例子.广告')?.domain).toMatch(/^xn--[a-z0-9-]+\.xn--[a-z0-9-]+$/);
  });

  it.each([
    ['a 64-octet local part of 2-octet characters is too long', `${'é'.repeat(33)}@example.com`],
    ['C1 control in the local part', 'a\u0085b@example.com'],
    ['an IDNA domain whose ASCII form has a 64-octet label', `a@${'ü'.repeat(60)}.de`],
    ['a forbidden code point in the domain', 'a@exa mple.中国'],
    ['a label ending in a hyphen after IDNA', 'a@bücher-.de'],
  ])('refuses: %s', (_why, address) => {
    expect(parseAddress(address)).toBeUndefined();
  });
});

describe('ASCII edge cases', () => {
  it.each([
    ['Upper@Example.COM', true],
    ['a@b', true],
    ['a@b.c-d.e', true],
    ['a@-b.c', false],
    ['a@b.c-', false],
    ['a@b_c.d', false],
    ['a@@b.c', false],
    ['a.@b.c', false],
    ['@b.c', false],
    ['a@', false],
    ['a@[IPv6:::1]', true],
    ['a@[ipv6:::1]', true],
    ['a@[300.1.1.1]', false],
    [`${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`, true],
    [`${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.com`, false],
  ])('%s → %s', (address, ok) => {
    expect(parseAddress(address) !== undefined).toBe(ok);
  });

  it('lower-cases the domain once and keeps the local part as given', () => {
    expect(parseAddress('John.Smith@Example.COM')).toEqual({ local: 'John.Smith', domain: 'example.com', literal: false });
  });

  it.each([
    ['1.2.3.4', true],
    ['01.2.3.255', true],
    ['1.2.3', false],
    ['1.2.3.4.', false],
    ['1..3.4', false],
  ])('IPv4 %s → %s', (s, ok) => expect(isIpv4(s)).toBe(ok));

  it.each([
    ['1:2:3:4:5:6:7:8', true],
    ['::', true],
    ['1::', true],
    ['::1.2.3.4', true],
    ['1:2:3:4:5:6:1.2.3.4', true],
    ['1:2:3:4:5:6:7::', false],
    ['12345::', false],
  ])('IPv6 %s → %s', (s, ok) => expect(isIpv6(s)).toBe(ok));
});
