import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Summary } from '../../src/summary.js';
import { Browser, CHROMIUM, hasChromium, type Page } from '../support/chromium.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import { startFaultServer } from '../support/fault-server.js';
import { decodePng } from '../support/png.js';
import { BIN } from '../support/run-cli.js';
import { runInProcess } from '../support/run-in-process.js';
import { missingTool } from '../support/tools.js';
import { waitFor } from '../support/wait.js';

// --report through the real binary (offline engine, loopback DNS), the page
// opened from file:// in headless Chromium: what a user double-clicking the
// file would see, with the network watched.
const SAMPLE = fileURLToPath(new URL('../fixtures/report-sample.csv', import.meta.url));
const CONTACTS = fileURLToPath(new URL('../../fixtures/contacts.csv', import.meta.url));
const SCREENSHOT = fileURLToPath(new URL('../../docs/report.png', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'mailsift-report-'));
const mx = (host: string) => ({ mx: [{ exchange: host, priority: 10 }] });

const skipped = missingTool('Chromium', !hasChromium() && `the real-browser tests of --report need it at ${CHROMIUM} (apt-get install chromium)`);

let dns: TestDnsServer;
let browser: Browser;
beforeAll(async () => {
  dns = await startDnsServer({
    zones: {
      'acme.test': mx('mail.acme.test'),
      'bricks.test': { a: ['192.0.2.7'] },
      'yahoo.com': mx('mta5.am0.yahoodns.net'),
      'outlook.com': mx('outlook-com.olc.protection.outlook.com'),
      'mailinator.com': mx('mail.mailinator.com'),
      // the domains of fixtures/contacts.csv, as the internet answers for them
      'yahoo.co.uk': mx('mx-eu.mail.am0.yahoodns.net'),
      'acme-widgets.com': mx('mx.acme-widgets.com'),
      'hotmail.com': mx('hotmail-com.olc.protection.outlook.com'),
      'xn--bcher-kva.de': mx('mail.xn--bcher-kva.de'),
      'fastmail.com': mx('in1-smtp.messagingengine.com'),
      'icloud.com': mx('mx01.mail.icloud.com'),
      'orange.fr': mx('smtp-in.orange.fr'),
      'gmx.com': mx('mx00.gmx.com'),
      'guerrillamail.com': mx('mx.guerrillamail.com'),
      // registered by typo-squatters, as such domains usually are
      'gmial.com': mx('mx.gmial.com'),
      'hotmial.com': mx('mx.hotmial.com'),
    },
  });
  if (!skipped) browser = await Browser.launch();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await dns?.close();
});

const local = () => ['--engine', 'local', '--dns-server', dns.address, '--dns-timeout', '500', '-q'];

/** The figures the page marks with data-figure, as numbers ("1,234" → 1234). */
const figuresOf = (page: Page) =>
  page
    .evaluate<Record<string, string>>(
      `Object.fromEntries([...document.querySelectorAll('[data-figure]')].map((e) => [e.dataset.figure, e.textContent.trim()]))`,
    )
    .then((f) => Object.fromEntries(Object.entries(f).map(([k, v]) => [k, Number(v.replace(/[,~]/g, ''))])));

/** Opens the file as a user would and checks it stood alone: nothing asked of the network, nothing logged as an error. */
async function openAlone(path: string, viewport?: { width: number; height: number }): Promise<Page> {
  const page = await browser.newPage(viewport);
  const url = pathToFileURL(path).href;
  await page.open(url);
  expect(page.requests).toEqual([url]);
  expect(page.errors).toEqual([]);
  return page;
}

/**
 * Runs the binary on `input` (copied as contacts.csv, named as a user would
 * name the files) with --summary and --report, opens the report, and checks
 * its figures against the summary's.
 */
async function runAndOpen(input: string, extra: string[] = []) {
  const work = mkdtempSync(join(dir, 'run-'));
  copyFileSync(input, join(work, 'contacts.csv'));
  const args = ['validate', 'contacts.csv', '-o', 'cleaned.csv', '--summary', 'summary.json', '--report', 'report.html', ...extra];
  const r = await runInProcess([...args, ...local()], { cwd: work });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const summary = JSON.parse(readFileSync(join(work, 'summary.json'), 'utf8')) as Summary & { reasons?: Record<string, number> };
  const page = await openAlone(join(work, 'report.html'), { width: 1280, height: 800 });
  const f = await figuresOf(page);
  const statuses = ({ total, valid, invalid, risky, unknown }: Record<string, number | undefined>) => ({ total, valid, invalid, risky, unknown });
  expect(statuses(f)).toEqual(statuses(summary as unknown as Record<string, number>));
  expect(f.duplicates).toBe(summary.duplicates);
  expect(f['duplicates.rows']).toBe(summary.duplicates);
  expect(f.prechecked).toBe(summary.prechecked);
  expect(f.errors).toBe(summary.errors);
  // the reasons, as the summary counts them
  for (const [reason, rows] of Object.entries(summary.reasons ?? {})) expect(f[`reason.${reason}`], reason).toBe(rows);
  const shown = Object.keys(f).filter((k) => k.startsWith('reason.'));
  expect(shown.length).toBe(Object.keys(summary.reasons ?? {}).length);
  // the next steps share out every row
  expect(f['action.send']! + f['action.fix']! + f['action.retry']! + f['action.suppress']!).toBe(summary.total);
  return { page, summary, f };
}

describe.skipIf(skipped)('--report in headless Chromium', () => {
  it("opens from file:// without a request or an error, shows the summary's figures, and is not blank", async () => {
    const { page, summary, f } = await runAndOpen(SAMPLE, ['--only', 'valid,risky']);
    // every row, before --only kept the valid and risky ones: as the summary counts
    expect(summary.written).toBeLessThan(summary.total);
    expect(summary.duplicates).toBeGreaterThan(0);
    // gmial.com and hotmial.com: five rows a suggestion would fix
    expect(f.typos).toBe(5);
    expect(f['typos.fixable']).toBe(5);

    // fits a laptop screen, and a phone held upright: no sideways scrolling
    expect(await page.evaluate('document.documentElement.scrollWidth <= innerWidth')).toBe(true);
    await page.viewport(420, 900);
    const wider = `[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > innerWidth + 0.5).map((e) => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).slice(0, 8).join('; ')`;
    expect(await page.evaluate(wider)).toBe('');
    expect(await page.evaluate('document.documentElement.scrollWidth <= innerWidth')).toBe(true);
    await page.viewport(1280, 800);
    const png = await page.screenshot();
    const image = decodePng(png);
    expect(image.width).toBe(1280);
    // drawn: the status colours of the charts are on screen, and far from every pixel is the background
    const colours = new Map<number, number>();
    for (let i = 0; i < image.rgba.length; i += 4) {
      const rgb = (image.rgba[i]! << 16) | (image.rgba[i + 1]! << 8) | image.rgba[i + 2]!;
      colours.set(rgb, (colours.get(rgb) ?? 0) + 1);
    }
    const background = Math.max(...colours.values());
    expect(1 - background / (image.width * image.height)).toBeGreaterThan(0.03);
    for (const colour of [0x1a7f37, 0xcf222e, 0xbf8700, 0x6e7781]) expect(colours.get(colour) ?? 0, colour.toString(16)).toBeGreaterThan(100);

    // prints on A4: no sideways overflow at the printable width, a few pages at most
    await page.send('Emulation.setEmulatedMedia', { media: 'print' });
    await page.viewport(703, 1000); // 210 mm less the 2 × 12 mm margins, at 96 dpi
    expect(await page.evaluate('document.documentElement.scrollWidth <= innerWidth')).toBe(true);
    const pdf = (await page.pdf()).toString('latin1');
    const pages = pdf.match(/\/Type\s*\/Page[^s]/g)?.length ?? 0;
    expect(pages).toBeGreaterThanOrEqual(1);
    expect(pages).toBeLessThanOrEqual(4);
    const box = /\/MediaBox\s*\[([^\]]*)\]/.exec(pdf)?.[1]?.trim().split(/\s+/).map(Number);
    expect(box?.map(Math.round)).toEqual([0, 0, 595, 842]); // A4 in points
  }, 180_000);

  it('the report of fixtures/contacts.csv (the picture in the README)', async () => {
    const { page, f } = await runAndOpen(CONTACTS);
    expect(f.total).toBe(20);
    if (process.env.MAILSIFT_REPORT_SCREENSHOT) {
      // MAILSIFT_REPORT_SCREENSHOT=1 npx vitest run test/report/report-browser-e2e.test.ts
      // writes docs/report.png: the top of the page at a laptop's width
      await page.viewport(1000, 800);
      writeFileSync(SCREENSHOT, await page.screenshot(1600));
    }
  }, 120_000);

  it('a hostile list cannot put markup in the page: addresses, domains and the file name show as text', async () => {
    const hostile = join(dir, '<img src=x onerror=alert(1)>.csv');
    writeFileSync(
      hostile,
      'email\n' +
        '"<script>alert(1)</script>@acme.test"\n' +
        '"x@<img src=x onerror=alert(2)>.test"\n' +
        '"bob@<style>body{display:none}</style>.test"\n' +
        '"eve@\u202Egro.evil.test"\n',
    );
    const report = join(dir, 'hostile.html');
    const r = await runInProcess(['validate', hostile, '-o', join(dir, 'hostile.csv'), '--report', report, ...local()]);
    expect(r.code).toBe(0);
    const page = await openAlone(report);
    expect(await page.evaluate(`document.querySelectorAll('script, img, iframe, object, embed, link[href]').length`)).toBe(0);
    expect(await page.evaluate(`document.querySelectorAll('style').length`)).toBe(1);
    const shown = await page.evaluate<string>('document.body.innerText');
    expect(shown).toContain('<img src=x onerror=alert(1)>.csv');
    expect(shown).toContain('<img src=x onerror=alert(2)>.test');
    expect(shown).toContain('<style>body{display:none}</style>.test');
  }, 120_000);
});

describe('--report, the file itself', () => {
  it('a dry run writes a report of what would be sent', async () => {
    const report = join(dir, 'dry.html');
    const r = await runInProcess(['validate', SAMPLE, '--dry-run', '--report', report, ...local()]);
    expect(r.code).toBe(0);
    const page = readFileSync(report, 'utf8');
    expect(page).toContain('dry run: nothing was sent');
    expect(page).toMatch(/data-figure="total">71</);
    expect(page).toMatch(/data-figure="duplicates">6</);
    expect(page).toContain('acme.test');
  }, 60_000);

  it('an API run reports its requests; a run the API refuses leaves the previous report byte-identical', async () => {
    const server = await startFaultServer({ apiKey: 'right-key' });
    try {
      const report = join(dir, 'api.html');
      const api = ['validate', SAMPLE, '--base-url', server.url, '--report', report, '-o', join(dir, 'api.csv'), '-q'];
      const ok = await runInProcess(api, { env: { MAILSIFT_API_KEY: 'right-key' } });
      expect(ok.code).toBe(0);
      const before = readFileSync(report);
      expect(before.toString()).toContain('the email-validation API');
      expect(before.toString()).toMatch(/data-figure="requests">1 · 0 retries</);

      const refused = await runInProcess(api, { env: { MAILSIFT_API_KEY: 'wrong-key' } });
      expect(refused.code).toBe(3);
      expect(readFileSync(report).equals(before)).toBe(true);
      expect(readdirSync(dir).filter((f) => f.endsWith('mailsift-tmp'))).toEqual([]);
    } finally {
      await server.close();
    }
  }, 60_000);

  it('Ctrl-C: the report covers the rows written so far, and says the run stopped early', async () => {
    // the first batch of 10 answered at once, the next after 1.5 s: Ctrl-C comes while it waits, and
    // the run waits for that answer and sends nothing more (an answer that never comes is waited
    // for 5 s and then abandoned: test/cli/interrupt.test.ts)
    let answered = 0;
    const server = await startFaultServer({ apiKey: 'right-key', delayMs: () => (answered++ >= 1 ? 1500 : 0) });
    try {
      const report = join(dir, 'stopped.html');
      const summaryPath = join(dir, 'stopped.json');
      const args = [
        BIN,
        'validate',
        SAMPLE,
        '--base-url',
        server.url,
        '--batch-size',
        '10',
        '--concurrency',
        '1',
        '--report',
        report,
        '--summary',
        summaryPath,
        '-o',
        join(dir, 'stopped.csv'),
        '-q',
      ];
      const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH, MAILSIFT_API_KEY: 'right-key' }, stdio: 'ignore' });
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      await waitFor(() => server.requests.length >= 2, { what: 'the second request (the one answered late)', timeoutMs: 15_000 });
      child.kill('SIGINT');
      expect(await exited).toBe(130);
      const summary = JSON.parse(readFileSync(summaryPath, 'utf8')) as Summary;
      expect(summary.interrupted).toBe(true);
      const page = readFileSync(report, 'utf8');
      expect(page).toContain('stopped early');
      expect(page).toContain(`data-figure="total">${summary.total}<`);
      expect(summary.total).toBeLessThan(71);
    } finally {
      await server.close();
    }
  }, 60_000);

  it('a report path that cannot be written fails before anything is read or sent', async () => {
    const r = await runInProcess(['validate', SAMPLE, '--report', join(dir, 'no-such-dir', 'r.html'), ...local()]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`mailsift: cannot write the report to ${join(dir, 'no-such-dir', 'r.html')}: no such directory (ENOENT)\n`);
    expect(r.stdout).toBe('');
    const d = await runInProcess(['validate', SAMPLE, '--report', dir, ...local()]);
    expect(d.code).toBe(2);
    expect(d.stderr).toContain('it is a directory');
    const stdout = await runInProcess(['validate', SAMPLE, '--report', '-', ...local()]);
    expect([stdout.code, stdout.stderr]).toEqual([2, 'mailsift: --report -: give the name of an .html file to write\n']);
    // nor may it be the input or another output, under any spelling
    const input = await runInProcess(['validate', SAMPLE, '--report', SAMPLE, ...local()]);
    expect([input.code, input.stderr]).toEqual([
      2,
      `mailsift: --report ${SAMPLE} is the input file ${SAMPLE}: writing it would destroy the input; give --report another path\n`,
    ]);
    const both = await runInProcess(['validate', SAMPLE, '-o', 'same.csv', '--report', './same.csv', ...local()], { cwd: dir });
    expect([both.code, both.stderr]).toEqual([2, 'mailsift: -o same.csv and --report ./same.csv are the same file; give each its own path\n']);
  }, 60_000);
});
