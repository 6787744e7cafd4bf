import ExcelJS from 'exceljs';
import iconv from 'iconv-lite';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalValidator, startServer } from '../../src/index.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import { parseCsv } from '../support/run-cli.js';
import { missingToolNow } from '../support/tools.js';

/**
 * The recipes run as written: every shell block fenced ```sh recipe in the
 * README or a docs/ page is run by bash in a fresh directory, with `mailsift`
 * and `npx mailsift` the built binary, DNS on loopback and the API a
 * `mailsift serve` on a free port (docs/development.md, "Recipes that run").
 * A recipe passes when it and every mailsift in it exit 0, or 5 (a --fail-on
 * rule holding is an answer, not a failure).
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const KEY = 'recipes-test-key';

interface Recipe {
  page: string;
  line: number;
  script: string;
}

function recipes(): Recipe[] {
  const pages = [
    'README.md',
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => `docs/${f}`),
  ];
  return pages.flatMap((page) => {
    const text = readFileSync(join(root, page), 'utf8');
    return [...text.matchAll(/^```sh recipe\n([\s\S]*?)^```$/gm)].map((m) => ({
      page,
      line: text.slice(0, m.index).split('\n').length,
      script: m[1]!,
    }));
  });
}

const all = recipes();
/** programs besides mailsift that recipes use; a block needing one this machine lacks is skipped (fails under CI=true) */
const tools = (script: string): string[] => ['jq'].filter((t) => new RegExp(`\\|\\s*${t}\\b`).test(script));
const have = (tool: string): boolean => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;

let dns: TestDnsServer;
let server: { url: string; close(): Promise<void> };
let engine: ReturnType<typeof createLocalValidator>;
let work: string;

beforeAll(async () => {
  // every domain has a mail host, as on a machine with working DNS
  dns = await startDnsServer({ fallback: () => ({ mx: [{ exchange: 'mx.example.net', priority: 10 }] }) });
  engine = createLocalValidator({ dnsServer: dns.address, dnsTimeoutMs: 5000 });
  server = await startServer({ keys: [KEY], engine });
  work = mkdtempSync(join(tmpdir(), 'mailsift-recipes-'));

  // the inputs, by the names the recipes use
  const inputs = join(work, 'inputs');
  mkdirSync(inputs);
  const contacts = readFileSync(join(root, 'fixtures/contacts.csv'), 'utf8');
  for (const name of ['contacts.csv', 'users.csv', 'signups.csv', 'big.csv']) writeFileSync(join(inputs, name), contacts);
  writeFileSync(join(inputs, 'export.csv'), iconv.encode(contacts, 'windows-1252'));
  const rows = contacts.trimEnd().split('\n').slice(1);
  const emails = rows.map((r) => /(?:^|,)([^,"]*@[^,"]*)(?:,|$)/.exec(r)?.[1]).filter((e): e is string => e !== undefined);
  writeFileSync(join(inputs, 'list.txt'), `${emails.join('\n')}\n`);
  const wb = new ExcelJS.Workbook();
  for (const sheet of ['Contacts', 'Leads']) {
    const ws = wb.addWorksheet(sheet);
    ws.addRow(['name', 'email']);
    for (const email of emails) ws.addRow([email.split('@')[0], email]);
  }
  await wb.xlsx.writeFile(join(inputs, 'contacts.xlsx'));

  // `mailsift` and `npx mailsift`: the built binary, its exit codes logged
  const bin = join(work, 'bin');
  mkdirSync(bin);
  const mailsift = join(bin, 'mailsift');
  writeFileSync(
    mailsift,
    `#!/usr/bin/env bash
args=("$@")
case "$1" in validate|check) args=("$1" --dns-server "$RECIPE_DNS" --dns-timeout 5000 "\${@:2}") ;; esac
node "$RECIPE_BIN" "\${args[@]}"
rc=$?
echo "$rc mailsift $*" >> "$RECIPE_LOG"
exit $rc
`,
  );
  const npx = join(bin, 'npx');
  writeFileSync(
    npx,
    `#!/usr/bin/env bash
if [ "$1" = mailsift ]; then shift; exec "${mailsift}" "$@"; fi
echo "recipes test: npx $1 is not provided; add it to test/docs/recipes-e2e.test.ts" >&2
exit 127
`,
  );
  chmodSync(mailsift, 0o755);
  chmodSync(npx, 0o755);
});

afterAll(async () => {
  await server?.close();
  await engine?.close();
  await dns?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

function run(script: string, dir: string, log: string): Promise<{ status: number | null; stderr: string }> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('MAILSIFT_')) env[k] = v;
  Object.assign(env, {
    PATH: `${join(work, 'bin')}:${process.env.PATH}`,
    HOME: dir,
    RECIPE_BIN: join(root, 'bin/mailsift.js'),
    RECIPE_DNS: dns.address,
    RECIPE_LOG: log,
    CI: '1',
  });
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stderr });
    });
  });
}

describe('the recipes run as written', () => {
  it('finds the recipes of the README', () => {
    expect(all.filter((r) => r.page === 'README.md').length).toBeGreaterThan(0);
  });

  it.concurrent.each(all.map((r) => [`${r.page}:${r.line}`, r] as const))(
    '%s',
    async (_name, recipe) => {
      const missing = tools(recipe.script).filter((t) => !have(t));
      if (missingToolNow(undefined, missing.join(', '), missing.length > 0 && `not installed, and the recipe at ${_name} pipes into it`)) return;
      const dir = join(work, `run-${recipe.page.replace(/\W/g, '_')}-${recipe.line}`);
      cpSync(join(work, 'inputs'), dir, { recursive: true });
      const log = join(dir, '.mailsift-exits');
      writeFileSync(log, '');
      const script = recipe.script.replaceAll('https://api.example.com', server.url).replace(/MAILSIFT_API_KEY=\.\.\./g, `MAILSIFT_API_KEY=${KEY}`);
      const { status, stderr } = await run(script, dir, log);
      const exits = readFileSync(log, 'utf8').trim().split('\n').filter(Boolean);
      const failed = exits.filter((line) => !/^[05] /.test(line));
      const context = `\n${recipe.page}:${recipe.line}\n${script}\nstderr:\n${stderr}`;
      expect(exits.length, `no mailsift ran${context}`).toBeGreaterThan(0);
      expect(failed, `a mailsift failed${context}`).toEqual([]);
      expect(stderr, context).not.toMatch(/command not found|No such file or directory|not provided/);
      expect([0, 5], `bash exited ${status}${context}`).toContain(status);
      // a block is a dozen processes, run beside the others: on a loaded machine that is more than
      // the default 30 s, and nothing here measures time (run() kills a block at 60 s)
    },
    90_000,
  );
});

describe('what the recipes promise', () => {
  it.each(['README.md', 'docs/recipes.md'])('%s: "a list you can mail" holds no role, disposable, invalid or unknown row', async (page) => {
    const line = readFileSync(join(root, page), 'utf8')
      .split('\n')
      .find((l) => l.includes('-o mailable.csv'));
    expect(line, `${page} has no mailable.csv recipe`).toBeDefined();
    const dir = join(work, `mailable-${page.replace(/\W/g, '_')}`);
    cpSync(join(work, 'inputs'), dir, { recursive: true });
    const log = join(dir, '.mailsift-exits');
    writeFileSync(log, '');
    const { status, stderr } = await run(line!, dir, log);
    expect(status, stderr).toBe(0);
    const [header, ...rows] = parseCsv(readFileSync(join(dir, 'mailable.csv'), 'utf8'));
    const at = (name: string) => header!.indexOf(name);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row[at('role')], row.join(',')).not.toBe('true');
      expect(row[at('disposable')], row.join(',')).not.toBe('true');
      expect(['valid', 'risky'], row.join(',')).toContain(row[at('status')]);
      if (row[at('status')] === 'risky') expect(row[at('reason')]).toBe('catch_all');
    }
    // the fixture's no-reply@ (and every other role address) is left out
    expect(rows.map((r) => r.join(',')).join('\n')).not.toMatch(/no-reply@|info@|support@/);
  });
});
