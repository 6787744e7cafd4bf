import { describe, expect, it } from 'vitest';
import { renderReport, type ReportMeta } from '../../src/report/render.js';
import { ReportTally } from '../../src/report/tally.js';
import { emptySummary, type Summary } from '../../src/summary.js';
import { verdict } from './verdict.js';

/**
 * The summary as the pipeline's Tally would count the tally's rows: the report
 * reads its rows, statuses and reasons from the summary, never from its own tally.
 */
function summaryOf(t: ReportTally): Partial<Summary> {
  const s: Partial<Summary> & { reasons: Record<string, number> } = { total: 0, valid: 0, invalid: 0, risky: 0, unknown: 0, reasons: {} };
  for (const g of t.byGroup()) {
    s.total! += g.rows;
    s[g.status]! += g.rows;
    if (g.reason !== '') s.reasons[g.reason] = (s.reasons[g.reason] ?? 0) + g.rows;
  }
  return s;
}

const meta = (t: ReportTally, summary: Partial<Summary> = {}, more: Partial<ReportMeta> = {}): ReportMeta => ({
  input: 'contacts.csv',
  engine: 'local',
  summary: { ...emptySummary('local'), ...summaryOf(t), ...summary },
  finishedAt: new Date('2026-11-25T12:00:00Z'),
  version: '9.9.9',
  output: 'cleaned.csv',
  ...more,
});

/** `data-figure` marks → their text, as numbers */
const figures = (page: string): Record<string, number> =>
  Object.fromEntries([...page.matchAll(/data-figure="([^"]+)">([^<]*)</g)].map(([, k, v]) => [k, Number(v!.replace(/[^\d.]/g, ''))]));

/** every element the page holds: only the report's own markup may appear */
const OWN_TAGS = new Set(
  'html head meta title style body main header footer h1 h2 h3 p span section dl div dt dd table thead tbody tr th td svg rect ul li b code bdi'.split(' '),
);
const tagsOf = (page: string): Set<string> => new Set([...page.matchAll(/<([a-zA-Z][\w-]*)/g)].map(([, t]) => t!.toLowerCase()));

function sampleTally(): ReportTally {
  const t = new ReportTally();
  for (let i = 0; i < 6; i++) t.add(verdict(`u${i}@x.test`, 'valid', { domain: 'x.test' }), '');
  t.add(verdict('info@x.test', 'risky', { domain: 'x.test', role: true }), 'role');
  t.add(verdict('a@mailinator.com', 'risky', { domain: 'mailinator.com', disposable: true }), 'disposable');
  t.add(verdict('b@gmial.com', 'invalid', { domain: 'gmial.com', suggestion: 'b@gmail.com' }), 'domain_not_found');
  t.add(verdict('c@down.test', 'unknown', { domain: 'down.test' }), 'dns_error');
  t.add(verdict('nope', 'invalid', { syntax: false }), 'syntax');
  return t;
}

describe('renderReport', () => {
  it("shows the tally's figures and the summary's, and shares every row out to a next step", () => {
    const page = renderReport(sampleTally(), meta(sampleTally(), { duplicates: 2, prechecked: 1, errors: 0, elapsedMs: 83_000 }));
    const f = figures(page);
    expect(f).toMatchObject({ total: 11, valid: 6, invalid: 2, risky: 2, unknown: 1, duplicates: 2, prechecked: 1, errors: 0, 'duplicates.rows': 2 });
    expect(f).toMatchObject({ 'reason.syntax': 1, 'reason.role': 1, 'reason.disposable': 1, 'reason.domain_not_found': 1, 'reason.dns_error': 1 });
    // send: valid and role; fix: the misspelt domain; retry: DNS; suppress: disposable and syntax
    expect(f).toMatchObject({ 'action.send': 7, 'action.fix': 1, 'action.retry': 1, 'action.suppress': 2 });
    expect(f).toMatchObject({ typos: 1, 'typos.fixable': 1 });
    expect(page).toContain('1 min 23 s');
    expect(page).toContain('<bdi>b@gmial.com</bdi> → <bdi>b@gmail.com</bdi>');
  });

  it("says how to get each card's rows: the --only flags that pick exactly them", () => {
    const page = renderReport(sampleTally(), meta(sampleTally()));
    expect(page).toContain('<code>--only valid,role -o send.csv</code>');
    expect(page).toContain('<code>--only domain_not_found -o fix.csv</code>');
    expect(page).toContain('<code>--only dns_error -o retry.csv</code>');
    expect(page).toContain('<code>--only syntax,disposable -o suppress.csv</code>');
    // a misspelt domain's rows of a reason that also has rows without a suggestion: no flag picks just those
    const t = sampleTally();
    t.add(verdict('z@nowhere.test', 'invalid', { domain: 'nowhere.test' }), 'domain_not_found');
    const mixed = renderReport(t, meta(t));
    expect(mixed).toContain('<code>--only syntax,disposable -o suppress.csv</code>, and the <code>domain_not_found</code> rows without a suggestion');
    expect(mixed).toContain('Get them: the <code>domain_not_found</code> rows with a suggestion');
    expect(mixed).not.toContain('-o fix.csv');
  });

  it('stands alone: no script, nothing fetched, and a policy that forbids both', () => {
    const page = renderReport(sampleTally(), meta(sampleTally()));
    expect([...tagsOf(page)].filter((t) => !OWN_TAGS.has(t))).toEqual([]);
    expect(page).not.toMatch(/\b(src|href|xlink:href)\s*=/i);
    expect(page).not.toMatch(/url\(|@import|https?:/i);
    expect(page).toContain(`content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"`);
  });

  it('escapes every piece of user data: a hostile list shows as text, never as markup', () => {
    const t = new ReportTally();
    const evil = '<script>alert(1)</script>';
    t.add(verdict(`${evil}@x.test`, 'invalid', { domain: 'x.test' }), 'syntax');
    t.add(verdict('a@<img src=x onerror=alert(2)>', 'invalid', { domain: '<img src=x onerror=alert(2)>' }), 'syntax');
    t.add(verdict('q@"><svg onload=alert(3)>.test', 'risky', { domain: '"><svg onload=alert(3)>.test', suggestion: `${evil}@gmail.com` }), 'typo');
    t.add(verdict('ctl@\u0001\u001b[31m.test', 'invalid'), 'syntax');
    // a reason is the caller's token, but goes through the same escaping
    t.add(verdict('r@x.test', 'risky'), '<b>odd</b>');
    const page = renderReport(t, meta(t, { total: 5 }, { input: `"><iframe src=//evil>.csv`, output: `</style><script>x</script>` }));
    expect([...tagsOf(page)].filter((tag) => !OWN_TAGS.has(tag))).toEqual([]);
    expect(page).not.toContain('<script');
    expect(page).not.toContain('<img');
    expect(page).not.toContain('<iframe');
    expect(page).not.toContain('<b>odd');
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;@gmail.com');
    expect(page).toContain('q@&quot;&gt;&lt;svg onload=alert(3)&gt;.test');
    expect(page).toContain('&quot;&gt;&lt;iframe src=//evil&gt;.csv');
    expect(page).toContain('&lt;img src=x onerror=alert(2)&gt;');
    expect(page).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/);
    // attributes hold no user data unescaped either: every quote in the page is one of ours
    expect(page).not.toMatch(/="[^"]*"[^\s>/]/);
  });

  it('neutralises bidirectional controls in file names and domains: a right-to-left override cannot make .csv read as .jpg', () => {
    const t = new ReportTally();
    t.add(verdict('a@x\u202Emoc.test', 'valid', { domain: 'x\u202Emoc.test' }), '');
    const page = renderReport(t, meta(t, { total: 1 }, { input: 'invoice\u202Egpj.csv', output: 'out\u2067.csv' }));
    expect(page).not.toMatch(/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
    expect(page).toContain('invoice\\u202Egpj.csv');
    expect(page).toContain('x\\u202Emoc.test');
  });

  it('says when the domains were counted approximately, and marks those counts', () => {
    const t = new ReportTally();
    for (let i = 0; i < 10_050; i++) t.add(verdict(`a@d${i}.test`, 'valid'), '');
    for (let i = 0; i < 5; i++) t.add(verdict('a@big.test', 'invalid'), 'domain_not_found');
    const page = renderReport(t, meta(t));
    expect(page).toContain('more than 10,000 distinct domains');
    expect(page).toContain('A count marked ≥ is at least that many rows');
    expect(page).not.toContain('slots');
    expect(page).toMatch(/big\.test<\/bdi><\/td><td class="n">(≥ )?5</);
  });

  it('a dry run shows what would be sent, and no verdicts it does not have', () => {
    const t = new ReportTally();
    t.add(verdict('a@x.test', 'unknown', { domain: 'x.test' }));
    t.add(verdict('nope', 'invalid', { syntax: false }));
    const dryRun = {
      rows: 2,
      distinctAddresses: 1,
      duplicates: 0,
      prechecked: 1,
      empty: 0,
      alreadyKnown: 0,
      toSend: 1,
      engine: 'api' as const,
      batchSize: 1000,
      requests: 1,
      concurrency: 4,
    };
    const page = renderReport(t, meta(t, { prechecked: 1 }, { engine: 'api', dryRun, output: undefined }));
    expect(page).toContain('dry run: nothing was sent');
    expect(figures(page)).toMatchObject({ total: 2, distinct: 1, prechecked: 1, toSend: 1, requests: 1 });
    expect(page).not.toContain('<h2>Statuses');
    expect(page).not.toContain('<h2>Next steps');
    expect(page).toContain('x.test');
  });

  it('shows an internationalised domain in its ASCII form, with the Unicode form beside it', () => {
    const t = new ReportTally();
    t.add(verdict('j@xn--bcher-kva.de', 'valid', { domain: 'xn--bcher-kva.de' }), '');
    expect(renderReport(t, meta(t))).toContain('<bdi>xn--bcher-kva.de</bdi> <span class="muted">(<bdi>bücher.de</bdi>)</span>');
  });

  it('without reasons from its caller, says so instead of drawing an empty chart', () => {
    const t = new ReportTally();
    t.add(verdict('a@x.test', 'valid'));
    expect(renderReport(t, meta(t))).toContain('gives no reasons');
  });
});
