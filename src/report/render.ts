import { domainToUnicode } from 'node:url';
import type { DryRunCounts, Summary } from '../summary.js';
import { count, duration, percent, plural, printable } from '../format.js';
import { REASONS } from '../reason.js';
import { STATUSES, type Status } from '../verdict.js';
import { bar, stackedBar } from './charts.js';
import { Html, html, userText } from './html.js';
import { ACTIONS, ACTION_TITLE, nextStep, type Action } from './next-steps.js';
import { outageLines } from './outage.js';
import { REPORT_CSS } from './style.js';
import type { ReportTally } from './tally.js';
import { DOMAIN_SLOTS } from './top-domains.js';

/** How many domains and misspellings the report lists. */
export const TOP_DOMAINS = 20;
const TOP_TYPOS = 10;

/** What the report says about the run besides the rows' tally. */
export interface ReportMeta {
  /** the input as named on the command line (`-` for stdin) */
  input: string;
  engine: 'api' | 'local';
  /** the run's summary: time taken, duplicates, precheck, reuse, requests, errors */
  summary: Summary;
  finishedAt: Date;
  version: string;
  /** where the verdicts went (a file, a directory, stdout) */
  output?: string;
  /** set for `--dry-run`: what would be sent; nothing was */
  dryRun?: DryRunCounts;
}

/**
 * The report: one self-contained HTML page (inline CSS and SVG, no script, no
 * fetch — a Content-Security-Policy says so to the browser too). Pure: the
 * same tally and meta give the same bytes.
 */
export function renderReport(tally: ReportTally, meta: ReportMeta): string {
  const title = `mailsift report: ${meta.input === '-' ? 'stdin' : printable(meta.input)}`;
  const body = meta.dryRun
    ? [overview(meta), domains(tally, meta), duplicates(meta.summary)]
    : [
        overview(meta),
        statuses(meta.summary),
        reasons(tally, meta.summary),
        nextSteps(tally, meta.summary.total),
        domains(tally, meta),
        typos(tally),
        duplicates(meta.summary),
      ];
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="mailsift ${meta.version}">
<title>${title}</title>
<style>${new Html(REPORT_CSS) /* ours: markup, not text */}</style>
</head>
<body>
<main>
${body}
<footer>Made by mailsift ${meta.version} on ${meta.finishedAt
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC')}.
Every count is of input rows, duplicates included, before <code>--only</code>, <code>--except</code> or <code>--unique</code> leave any out: the same counts as the summary.</footer>
</main>
</body>
</html>
`.markup;
}

const ENGINE_NAME = { api: 'the email-validation API', local: 'the offline engine' } as const;

function overview(meta: ReportMeta): Html {
  const s = meta.summary;
  const item = (label: string, value: Html | string, figure?: string, small = false) =>
    html`<div><dt>${label}</dt><dd${small ? new Html(' class="small"') : ''}${figure ? html` data-figure="${figure}"` : ''}>${value}</dd></div>`;
  const input = meta.input === '-' ? 'stdin' : meta.input;
  const d = meta.dryRun;
  const items = d
    ? [
        item('Rows', count(d.rows), 'total'),
        item('Distinct addresses', count(d.distinctAddresses), 'distinct'),
        item('Duplicates', count(d.duplicates), 'duplicates'),
        item('Rejected by precheck', count(d.prechecked), 'prechecked'),
        d.empty > 0 && item('Empty address cells', count(d.empty), 'empty'),
        item('Already known', count(d.alreadyKnown), 'known'),
        item(meta.engine === 'api' ? 'To send' : 'To check', count(d.toSend), 'toSend'),
        meta.engine === 'api' && item('Bulk requests', count(d.requests), 'requests'),
      ]
    : [
        item('Rows', count(s.total), 'total'),
        item('Time taken', duration(s.elapsedMs), 'elapsed'),
        item('Duplicates', count(s.duplicates), 'duplicates'),
        item('Rejected by precheck', count(s.prechecked), 'prechecked'),
        s.empty > 0 && item('Empty address cells', count(s.empty), 'empty'),
        s.fromJournal + s.fromCache > 0 && item('Reused', `${count(s.fromJournal)} journal · ${count(s.fromCache)} cache`, 'reused', true),
        meta.engine === 'api' && item('Requests', `${count(s.requests)} · ${plural(s.retries, 'retry', 'retries')}`, 'requests', true),
        item('Errors', count(s.errors), 'errors'),
      ];
  return html`<header>
<h1>mailsift report ${d ? html`<span class="badge warn">dry run: nothing was sent</span>` : ''}${s.interrupted ? html`<span class="badge warn">stopped early: ${count(s.total)} rows</span>` : ''}</h1>
<p class="sub">${userText(input)}${s.columns?.length ? html` · ${s.columns.length === 1 ? 'column' : 'columns'} ${userText(s.columns.map((c) => c.name || `column ${c.number}`).join(', '))}` : ''} · ${ENGINE_NAME[meta.engine]}${meta.output ? html` · verdicts in ${userText(meta.output)}` : ''}</p>
${outageLines(s).map((line) => html`<p class="notice" role="alert" data-figure="outage">${line}</p>`)}
</header>
<section aria-label="overview"><dl class="grid">${items}</dl></section>`;
}

function statuses(s: Summary): Html {
  const rows = s.total;
  const segments = STATUSES.map((status) => ({ label: status, rows: s[status], tone: status }));
  const line = (status: Status) => html`<tr>
<td><span class="swatch ${status}"></span>${status}</td>
<td class="n" data-figure="${status}">${count(s[status])}</td>
<td class="n">${percent(s[status], rows)}</td>
<td class="chart">${bar(s[status], rows, status)}</td></tr>`;
  return html`<section><h2>Statuses</h2>
${stackedBar(segments, rows, 'rows by status')}
<table><thead><tr><th>status</th><th class="n">rows</th><th class="n">share</th><th class="chart"></th></tr></thead>
<tbody>${STATUSES.map(line)}</tbody></table></section>`;
}

function reasons(t: ReportTally, s: Summary): Html {
  if (!t.reasonsGiven) return html`<section><h2>Reasons</h2><p class="muted">This build of mailsift gives no reasons.</p></section>`;
  // the summary's counts, most first
  const list = Object.entries(s.reasons)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const max = list[0]?.[1] ?? 0;
  const statusOf = new Map(t.byGroup().map((g) => [g.reason, g.status]));
  const line = ([reason, rows]: [string, number]) => {
    const status = statusOf.get(reason) ?? 'unknown';
    return html`<tr><td><code>${reason}</code></td><td class="muted">${status}</td>
<td class="n" data-figure="reason.${reason}">${count(rows)}</td><td class="n">${percent(rows, s.total)}</td>
<td class="chart">${bar(rows, max, status)}</td></tr>`;
  };
  return html`<section><h2>Reasons</h2>
${
  list.length === 0
    ? html`<p class="muted">No row needs a reason: every one is plainly valid.</p>`
    : html`<table><thead><tr><th>reason</th><th>status</th><th class="n">rows</th><th class="n">share</th><th class="chart"></th></tr></thead>
<tbody>${list.map(line)}</tbody></table>`
}
<p class="note">Why a row is not plainly valid; shares are of all ${count(s.total)} rows.</p></section>`;
}

/** statuses, then reasons as the docs list them: a card's flags in a stable order */
const TOKEN_ORDER: readonly string[] = [...STATUSES, ...REASONS];

function nextSteps(t: ReportTally, total: number): Html {
  const byAction = new Map<Action, { rows: number; items: Html[]; tokens: Set<string> }>(ACTIONS.map((a) => [a, { rows: 0, items: [], tokens: new Set() }]));
  /** the cards a --only token would pick rows of: a token on two cards selects neither exactly */
  const cardsOf = new Map<string, Set<Action>>();
  for (const g of t.byGroup()) {
    const step = nextStep(g.status, g.reason, g.fixable);
    const card = byAction.get(step.action)!;
    card.rows += g.rows;
    card.items.push(
      html`<li><b>${count(g.rows)}</b> ${g.status}${g.reason ? html` <code>${g.reason}</code>` : ''}${g.fixable ? ' with a suggestion' : ''}: ${withFlags(step.advice)}</li>`,
    );
    // what --only matches a row by: its reason, or its status when it has none
    const token = g.reason || g.status;
    card.tokens.add(token);
    cardsOf.set(token, (cardsOf.get(token) ?? new Set()).add(step.action));
  }
  const card = (action: Action) => {
    const { rows, items, tokens } = byAction.get(action)!;
    const exact = [...tokens].filter((token) => cardsOf.get(token)!.size === 1).sort((a, b) => TOKEN_ORDER.indexOf(a) - TOKEN_ORDER.indexOf(b));
    const shared = [...tokens].filter((token) => cardsOf.get(token)!.size > 1);
    // a token is shared only through a suggestion: the fix card has the rows with one, the other card the rest
    const which = action === 'fix' ? 'with' : 'without';
    const sharedText = shared.length ? html`the ${shared.map((s, i) => html`${i ? ', ' : ''}<code>${s}</code>`)} rows ${which} a suggestion` : '';
    const get =
      exact.length === 0 && shared.length === 0
        ? ''
        : exact.length === 0
          ? html`<p class="get">Get them: ${sharedText}</p>`
          : html`<p class="get">Get them: <code>--only ${exact.join(',')} -o ${action}.csv</code>${shared.length ? html`, and ${sharedText}` : ''}</p>`;
    return html`<div class="step ${action}"><h3>${ACTION_TITLE[action]}</h3>
<div class="big" data-figure="action.${action}">${count(rows)}</div><div class="muted">${percent(rows, total)} of rows</div>
${items.length ? html`<ul>${items}</ul>${get}` : html`<p class="muted">none</p>`}</div>`;
  };
  return html`<section><h2>Next steps</h2><div class="steps">${ACTIONS.map(card)}</div>
<p class="note">Add a card's flags to the command that made this report to write its rows to a file of their own;
with the same <code>--journal</code> nothing is validated twice. <code>--split DIR</code> writes one file per status.</p></section>`;
}

/**
 * A domain as the output has it (ASCII, so that a look-alike in another
 * script shows as the xn-- form it is), with its Unicode form beside it when
 * it has one.
 */
function domainText(domain: string): Html {
  const unicode = domain.includes('xn--') ? domainToUnicode(domain) : '';
  return unicode && unicode !== domain ? html`${userText(domain)} <span class="muted">(${userText(unicode)})</span>` : userText(domain);
}

/** Advice with its flags (`--journal`) as code, which never breaks at a hyphen. */
const withFlags = (advice: string): Html[] => advice.split(/(--[a-z][a-z-]*)/).map((part, i) => (i % 2 ? html`<code>${part}</code>` : html`${part}`));

function domains(t: ReportTally, meta: ReportMeta): Html {
  const top = t.domains.top(TOP_DOMAINS);
  const verdicts = !meta.dryRun; // a dry run has no statuses to break out
  const total = meta.dryRun ? meta.dryRun.rows : meta.summary.total;
  const line = (d: (typeof top)[number]) => {
    // past the exact slots, what is sure is the rows counted since the domain took its slot
    const own = d.rows - d.over;
    const mark = d.over > 0 ? '≥ ' : '';
    const segments = (['valid', 'invalid', 'risky', 'unknown'] as const).map((status) => ({
      label: status,
      rows: status === 'valid' ? own - d.invalid - d.risky - d.unknown : d[status],
      tone: status,
    }));
    return html`<tr><td class="name">${domainText(d.domain)}</td><td class="n">${mark}${count(own)}</td><td class="n">${mark}${percent(own, total)}</td>
${
  verdicts
    ? html`<td class="n">${count(d.invalid)}</td><td class="n">${count(d.risky)}</td><td class="n">${count(d.unknown)}</td>
<td class="chart">${stackedBar(segments, own, `${printable(d.domain)} by status`, 'mini')}</td>`
    : ''
}</tr>`;
  };
  const distinct = t.domains.approximate ? `more than ${count(DOMAIN_SLOTS)}` : count(t.domains.size);
  return html`<section><h2>Top domains</h2>
${
  top.length === 0
    ? html`<p class="muted">No row has a domain.</p>`
    : html`<table><thead><tr><th>domain</th><th class="n">rows</th><th class="n">share</th>
${verdicts ? html`<th class="n">invalid</th><th class="n">risky</th><th class="n">unknown</th><th class="chart"></th>` : ''}</tr></thead>
<tbody>${top.map(line)}</tbody></table>`
}
<p class="note">${distinct} distinct domains${t.noDomain ? `; ${plural(t.noDomain, 'row has', 'rows have')} none (empty or no @)` : ''}.
${t.domains.approximate ? `A count marked ≥ is at least that many rows: with more than ${count(DOMAIN_SLOTS)} domains, a domain's first rows may go uncounted until it is among the most frequent, and its invalid, risky and unknown columns are of the rows counted. Unmarked counts are exact.` : ''}</p></section>`;
}

function typos(t: ReportTally): Html {
  if (t.typoRows === 0) return html`<section><h2>Typos</h2><p class="muted">No misspelt domain was found.</p></section>`;
  const pairs = t.topTypos(TOP_TYPOS);
  return html`<section><h2>Typos</h2>
<p><b data-figure="typos">${count(t.typoRows)}</b> ${t.typoRows === 1 ? 'row looks' : 'rows look'} misspelt
(${plural(t.typoPairs.size, 'misspelt domain', 'misspelt domains')}${t.typoOtherRows ? `, and ${count(t.typoOtherRows)} more rows in others` : ''}).
Taking the suggestion would fix <b data-figure="typos.fixable">${count(t.typoNotValid)}</b> of them: the rows not valid as written.</p>
<table><thead><tr><th>written</th><th>suggested</th><th class="n">rows</th></tr></thead>
<tbody>${pairs.map((p) => html`<tr><td class="name">${domainText(p.from)}</td><td class="name">${domainText(p.to)}</td><td class="n">${count(p.rows)}</td></tr>`)}</tbody></table>
<p class="note">For example:</p>
<ul class="examples">${t.typoExamples.map((e) => html`<li>${userText(e.email)} → ${userText(e.suggestion)} <span class="muted">(${e.status})</span></li>`)}</ul></section>`;
}

function duplicates(s: Summary): Html {
  return html`<section><h2>Duplicates</h2>
<p><b data-figure="duplicates.rows">${count(s.duplicates)}</b> ${s.duplicates === 1 ? 'row repeats' : 'rows repeat'} an address seen earlier in the input
(${percent(s.duplicates, s.total)} of rows). Each address was validated once, and its verdict written on every row that holds it.</p></section>`;
}
