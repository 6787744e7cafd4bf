import { describe, expect, it } from 'vitest';
import { normalizeBulk } from '../src/engines/api/normalize.js';
import { decide, type Checks } from '../src/engines/local/decide.js';
import { precheckVerdict } from '../src/pipeline/precheck.js';
import { finalityOf, FINALITY, keptBy, reasonOf, REASON_TABLE, REASONS, statusesOf, undeterminedBy, type Finality } from '../src/reason.js';
import { readFileSync } from 'node:fs';
import { errorVerdict, type Verdict } from '../src/verdict.js';

/** one Shape A bulk item through the client's own normalisation */
const shapeA = (status: string, details: Record<string, unknown>): Verdict =>
  normalizeBulk({ results: [{ email: 'a@example.com', isValid: status !== 'invalid', status, confidence: 0.5, provider: 'p', details }] })![0]!;
/** one Shape B bulk item (no status, no details: isValid, flags and perhaps a type) */
const shapeB = (item: Record<string, unknown>): Verdict =>
  normalizeBulk({ success: true, data: { results: [{ email: 'a@example.com', confidence: 0.5, ...item }] } })![0]!;
/** the offline engine's verdict for these checks */
const engine = (c: Partial<Checks>): Verdict => decide('a@example.com', { syntax: true, domain: 'example.com', dns: 'mx', ...c });

describe('reasonOf', () => {
  it.each<[string, Verdict, string]>([
    // Shape A
    ['A valid', shapeA('valid', { syntax: true, mx: true }), ''],
    ['A invalid, bad syntax', shapeA('invalid', { syntax: false, mx: false }), 'syntax'],
    ['A invalid, no MX', shapeA('invalid', { syntax: true, mx: false }), 'no_mail_server'],
    ['A invalid, mailbox refused (serve --smtp)', shapeA('invalid', { syntax: true, mx: true, smtp: false }), 'mailbox_not_found'],
    ['A invalid, nothing more', shapeA('invalid', { syntax: true, mx: true }), 'rejected'],
    ['A risky, disposable and role: disposable wins', shapeA('risky', { disposable: true, role: true }), 'disposable'],
    ['A risky, a suggestion beats role', shapeA('risky', { role: true, suggestion: 'a@gmail.com' }), 'typo'],
    ['A risky, catch-all beats role', shapeA('risky', { role: true, smtp: true, catchAll: true }), 'catch_all'],
    ['A risky, full (smtp false on a risky row) beats catch-all', shapeA('risky', { smtp: false, catchAll: true }), 'mailbox_full'],
    ['A risky, role', shapeA('risky', { role: true, disposable: false }), 'role'],
    ['A risky, nothing more', shapeA('risky', { syntax: true, mx: true }), 'low_confidence'],
    ['A unknown', shapeA('unknown', {}), 'unverifiable'],
    // Shape B
    ['B valid', shapeB({ isValid: true }), ''],
    ['B invalid', shapeB({ isValid: false }), 'rejected'],
    ['B risky by type, disposable', shapeB({ isValid: true, type: 'risky', disposable: true }), 'disposable'],
    ['B risky by type, role', shapeB({ isValid: true, type: 'risky', role: true }), 'role'],
    ['B risky by type, nothing more', shapeB({ isValid: true, type: 'risky' }), 'low_confidence'],
    ['B unknown by type', shapeB({ isValid: false, type: 'unknown' }), 'unverifiable'],
    // precheck and rows without a verdict
    ['precheck, empty cell: its own reason', precheckVerdict(''), 'empty'],
    ['precheck, no @', precheckVerdict('not-an-address'), 'syntax'],
    ['no verdict from the API', errorVerdict('a@example.com', 'RATE_LIMITED', 'rate limited'), 'api_error'],
    ['missing from the responses', errorVerdict('a@example.com', 'MISSING_RESULT', 'missing'), 'api_error'],
    ['a dry run sent nothing', errorVerdict('a@example.com', 'DRY_RUN', 'would be sent'), 'unverifiable'],
    // the offline engine
    ['engine, bad syntax', decide('nope', { syntax: false, dns: 'skipped' }), 'syntax'],
    ['engine, NXDOMAIN', engine({ dns: 'nxdomain' }), 'domain_not_found'],
    ['engine, null MX', engine({ dns: 'null-mx' }), 'no_mail_server'],
    ['engine, neither MX nor A', engine({ dns: 'no-mail-host' }), 'no_mail_server'],
    ['engine, NXDOMAIN beats disposable', engine({ dns: 'nxdomain', disposable: true }), 'domain_not_found'],
    ['engine, DNS unanswered', engine({ dns: 'unanswered' }), 'dns_error'],
    ['engine, DNS unanswered but a role address: risky first', engine({ dns: 'unanswered', role: true }), 'role'],
    ['engine, MX', engine({}), ''],
    ['engine, DNS off', engine({ dns: 'skipped' }), ''],
    ['engine, typo', engine({ suggestion: 'a@gmail.com' }), 'typo'],
    ['engine, address literal', decide('a@[192.0.2.1]', { syntax: true, domain: '[192.0.2.1]', literal: true, dns: 'skipped' }), 'low_confidence'],
    ['engine, mailbox refused', engine({ mailbox: 'refused' }), 'mailbox_not_found'],
    ['engine, mailbox disabled', engine({ mailbox: 'disabled' }), 'mailbox_disabled'],
    ['engine, mailbox full', engine({ mailbox: 'full' }), 'mailbox_full'],
    ['engine, full role mailbox: full wins', engine({ mailbox: 'full', role: true }), 'mailbox_full'],
    ['engine, catch-all', engine({ mailbox: 'accepted', catchAll: true }), 'catch_all'],
    ['engine, accepted', engine({ mailbox: 'accepted', catchAll: false }), ''],
    ['engine, valid domain, mailbox check timed out', engine({ smtpFailure: 'timeout' }), 'smtp_timeout'],
    ['engine, valid domain, greylisted', engine({ smtpFailure: 'greylisted' }), 'greylisted'],
    ['engine, valid domain, port 25 unreachable', engine({ smtpFailure: 'unreachable' }), 'smtp_unreachable'],
    ['engine, valid domain, checker blocked', engine({ smtpFailure: 'blocked' }), 'smtp_blocked'],
    ['engine, valid domain, our MAIL FROM refused and <> too', engine({ smtpFailure: 'sender-refused' }), 'smtp_sender_refused'],
    ['engine, a non-ASCII local part and a server without SMTPUTF8', engine({ smtpFailure: 'no-utf8' }), 'smtp_no_utf8'],
    ['engine, a provider that accepts every address: not asked', engine({ acceptsAll: true }), 'unverifiable'],
    ['engine, a role address the check could not tell about stays risky', engine({ role: true, smtpFailure: 'timeout' }), 'role'],
    ['engine, an answer makes a failure with another host moot', engine({ mailbox: 'accepted', catchAll: false, smtpFailure: 'timeout' }), ''],
  ])('%s', (_name, verdict, reason) => {
    expect(reasonOf(verdict)).toBe(reason);
    // the decision of issue 31: a valid row carries no reason, and a mailbox the check could not tell about is unknown
    if (verdict.status === 'valid') expect(reason).toBe('');
    if (/^smtp_|^greylisted$/.test(reason)) expect(verdict.status).toBe('unknown');
    if (reason !== '') expect(statusesOf(reason as (typeof REASONS)[number])).toContain(verdict.status);
  });

  it('every token is snake_case, listed once, under one status', () => {
    expect(new Set(REASONS).size).toBe(REASONS.length);
    for (const r of REASONS) expect(r).toMatch(/^[a-z]+(_[a-z0-9]+)*$/);
    expect(Object.keys(REASON_TABLE)).toEqual(['invalid', 'risky', 'unknown']);
  });
});

describe('which verdicts are final (FINALITY, keptBy)', () => {
  it.each<[string, Verdict, Finality, string | undefined]>([
    ['a valid row', engine({}), 'final', undefined],
    ['an invalid domain', engine({ dns: 'nxdomain' }), 'final', undefined],
    ['a role address', engine({ role: true }), 'final', undefined],
    ['the API’s own unknown', shapeA('unknown', {}), 'resume-only', undefined],
    ['a provider that accepts everything: the engine’s own unknown', engine({ acceptsAll: true }), 'resume-only', undefined],
    ['DNS did not answer', engine({ dns: 'unanswered' }), 'never', 'dns_error'],
    ['the run’s DNS outage', engine({ dns: 'unanswered', outage: 'dns' }), 'never', 'dns_error'],
    ['greylisted', engine({ smtpFailure: 'greylisted' }), 'never', 'greylisted'],
    ['the checker blocked', engine({ smtpFailure: 'blocked' }), 'never', 'smtp_blocked'],
    ['a role address whose DNS did not answer: the domain might not exist', engine({ role: true, dns: 'unanswered' }), 'never', 'dns_error'],
    ['a role address whose mailbox check timed out', engine({ role: true, smtpFailure: 'timeout' }), 'never', 'smtp_timeout'],
    ['a row without a verdict', errorVerdict('a@example.com', 'SERVER_ERROR', 'down'), 'never', 'api_error'],
  ])('%s: %s', (_name, v, finality, undetermined) => {
    expect(finalityOf(v)).toBe(finality);
    expect(undeterminedBy(v)).toBe(undetermined);
    expect(keptBy('journal', v)).toBe(finality !== 'never');
    // no unknown is ever served from a cache
    expect(keptBy('cache', v)).toBe(finality === 'final');
    if (v.status === 'unknown') expect(keptBy('cache', v)).toBe(false);
  });

  it('docs/output.md’s table of reasons has the same final column as the code', () => {
    const doc = readFileSync(new URL('../docs/output.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('## Reasons: why a row is not plainly valid'));
    const rows = section.split('\n').filter((l) => /^\| (valid|invalid|risky|unknown) \|/.test(l));
    const words: Record<Finality, string> = { final: 'yes', 'resume-only': 'resume only', never: 'no' };
    const documented = Object.fromEntries(
      rows.map((l) => {
        const cells = l.split(' | ');
        return [cells[1]!.replace(/`/g, ''), cells.at(-1)!.replace(/ \|$/, '')];
      }),
    );
    expect(documented['*(empty)*']).toBe('yes');
    for (const r of REASONS) expect(documented[r], r).toBe(words[FINALITY[r]]);
    expect(Object.keys(documented)).toHaveLength(REASONS.length + 1);
  });
});
