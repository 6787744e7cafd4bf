import { describe, expect, it } from 'vitest';
import { checkOffline } from '../../../src/engines/local/index.js';
import { DomainList, domainLists, isDisposableDomain, isRoleLocalPart } from '../../../src/engines/local/lists.js';
import { editDistance, suggestDomain } from '../../../src/engines/local/suggest.js';

const lists = domainLists();

describe('role mailboxes', () => {
  it.each([
    ['postmaster', true],
    ['abuse', true],
    ['info', true],
    ['Info', true],
    ['sales', true],
    ['support+tickets', true],
    ['no-reply', true],
    ['No_Reply', true],
    ['do.not.reply', true],
    ['noreply', true],
    ['jane', false],
    ['information', false],
    ['infos', false],
    ['john.admin.smith', false],
  ])('%s → %s', (local, role) => expect(isRoleLocalPart(local)).toBe(role));
});

describe('disposable domains (package list)', () => {
  it.each([
    ['mailinator.com', true],
    ['guerrillamail.com', true],
    ['yopmail.com', true],
    ['gmail.com', false],
    ['example.com', false],
  ])('%s → %s', (domain, disposable) => expect(isDisposableDomain(lists, domain)).toBe(disposable));

  it('counts subdomains of a wildcard entry', () => {
    const wildcard = [...lists.disposableWildcard][0]!;
    expect(isDisposableDomain(lists, `anything.${wildcard}`)).toBe(true);
  });

  it('reports the list version', () => {
    expect(lists.disposableVersion).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe('free providers', () => {
  it.each([
    ['gmail.com', true],
    ['yahoo.co.uk', true],
    ['gmx.de', true],
    ['acme-corp.example', false],
  ])('%s → %s', (domain, free) => expect(lists.free.has(domain)).toBe(free));
});

describe('did-you-mean', () => {
  it.each([
    ['gmial.com', 'gmail.com'],
    ['gmail.con', 'gmail.com'],
    ['gnail.com', 'gmail.com'],
    ['gmaill.com', 'gmail.com'],
    ['yahooo.com', 'yahoo.com'],
    ['hotmial.com', 'hotmail.com'],
    ['outlok.com', 'outlook.com'],
    ['iclod.com', 'icloud.com'],
  ])('%s → %s', (domain, suggestion) => expect(suggestDomain(domain, lists.free)).toBe(suggestion));

  it.each([
    // real domains merely similar to popular ones
    'gmx.com',
    'mail.com',
    'email.com',
    'ymail.com',
    'hotmail.co.uk',
    'hotmail.fr',
    'live.co.uk',
    'lime.com',
    'hotmart.com',
    // the popular ones themselves, and the unrelated
    'gmail.com',
    'outlook.com',
    'example.com',
    'acme.io',
  ])('leaves %s alone', (domain) => expect(suggestDomain(domain, lists.free)).toBeUndefined());

  it.each([
    ['gmial', 'gmail', 1],
    ['kitten', 'sitting', 3],
    ['abc', 'abc', 0],
  ])('edit distance %s ~ %s = %i', (a, b, d) => expect(editDistance(a, b, 5)).toBe(d));
});

describe('offline verdicts (syntax + lists, DNS off)', () => {
  it.each([
    ['jane.doe@example.com', 'valid', { syntax: true, domain: 'example.com', disposable: false, role: false, free: false }],
    ['Jane@GMAIL.com', 'valid', { syntax: true, domain: 'gmail.com', free: true, role: false, disposable: false }],
    ['info@example.com', 'risky', { role: true }],
    ['bob@mailinator.com', 'risky', { disposable: true }],
    ['bob@gmial.com', 'risky', { suggestion: 'bob@gmail.com', free: false }],
    ['bob@[192.0.2.1]', 'risky', { domain: '[192.0.2.1]' }],
    ['not an address', 'invalid', { syntax: false }],
    ['bob@gmx.com', 'valid', { free: true, suggestion: undefined }],
  ] as const)('%s → %s', (email, status, details) => {
    const v = checkOffline(email);
    expect(v).toMatchObject({ email, status, provider: 'mailsift-local' });
    expect(v.details).toMatchObject(details);
    expect(v.details.mx).toBeUndefined();
  });
});

describe('the disposable list read from its text', () => {
  it('answers alike before and after it builds its Set', () => {
    const list = new DomainList(JSON.stringify(['a.example', 'b.example']));
    const answers = new Set<string>();
    for (let i = 0; i < 200; i++) {
      answers.add([list.has('a.example'), list.has('b.example'), list.has('example'), list.has('a.exampl'), list.has('"a.example"')].join());
    }
    expect([...answers]).toEqual(['true,true,false,false,false']);
  });
});
