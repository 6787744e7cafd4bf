// The user's files, the command in-process: no output may be the input or
// another output under any name; an existing output survives a run that fails
// byte for byte, with no temp file left; input cells come out as they were
// read. Stdout appended to the input (a descriptor of the process) and a run
// interrupted by Ctrl-C (a signal) spawn the binary: file-safety-e2e.test.ts.
import { chmodSync, existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { runInProcess } from '../support/run-in-process.js';
import { API_KEY, apiEnv } from '../stores/helpers.js';
import { caseDirectories, INPUT, LOCAL, snapshot } from './cases.js';

const root = mkdtempSync(join(tmpdir(), 'mailsift-files-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let server: FaultServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const dirWith = caseDirectories(root);

describe('no output may be the input or another output', () => {
  it.each<[string, (dir: string) => string[], RegExp]>([
    [
      '-o through a/../',
      (dir) => (mkdirSync(join(dir, 'a')), ['in.csv', '-o', './a/../in.csv']),
      /^mailsift: -o \.\/a\/\.\.\/in\.csv is the input file in\.csv: writing it would destroy the input; give -o another path$/,
    ],
    [
      '-o a symbolic link to the input',
      (dir) => (symlinkSync('in.csv', join(dir, 'link.csv')), ['in.csv', '-o', 'link.csv']),
      /^mailsift: -o link\.csv is the input file in\.csv \(through a symbolic link\)/,
    ],
    [
      '--summary a hard link of the input',
      (dir) => (linkSync(join(dir, 'in.csv'), join(dir, 'hard.json')), ['in.csv', '--summary', 'hard.json']),
      /^mailsift: --summary hard\.json is the input file in\.csv \(a hard link\)/,
    ],
    [
      '--split DIR holding the input as valid.csv',
      (dir) => (mkdirSync(join(dir, 'sorted')), ['sorted/../in.csv', '--split', 'sorted', '--only', 'valid']),
      /^mailsift: --split sorted\/valid\.csv is the input file/,
    ],
    [
      '--summary and -o one file',
      () => ['in.csv', '-o', 'out.csv', '--summary', 'out.csv'],
      /^mailsift: -o out\.csv and --summary out\.csv are the same file; give each its own path$/,
    ],
    [
      '--journal and --cache one file through a link',
      (dir) => (symlinkSync('c.cache', join(dir, 'j.journal')), ['in.csv', '--journal', 'j.journal', '--cache', 'c.cache']),
      /^mailsift: --journal j\.journal and --cache c\.cache are the same file \(through a symbolic link\)/,
    ],
  ])('%s: exit 2, one line naming both, nothing touched', async (_name, setUp, why) => {
    const dir = dirWith({ 'in.csv': INPUT });
    const args = setUp(dir);
    if (args[0] === 'sorted/../in.csv') linkSync(join(dir, 'in.csv'), join(dir, 'sorted/valid.csv'));
    const before = snapshot(dir);
    const r = await runInProcess(['validate', ...args, ...LOCAL], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr.trim()).toMatch(why);
    expect(snapshot(dir)).toEqual(before);
  });
});

describe('an existing output survives a run that does not complete', () => {
  const OLD = { 'out.csv': 'yesterday,complete\r\nresults\n', 's.json': '{"total": 2}\n' };
  const many = 'email\n' + Array.from({ length: 200 }, (_, i) => `u${i}@example.com`).join('\n') + '\n';

  it('exit 3 (the key refused): out.csv and the summary byte-identical, no temp file', async () => {
    server = await startFaultServer({ apiKey: 'another-key' });
    const dir = dirWith({ 'in.csv': many, ...OLD });
    const before = snapshot(dir);
    const r = await runInProcess(['validate', 'in.csv', '-o', 'out.csv', '--summary', 's.json', '--batch-size', '10'], { cwd: dir, env: apiEnv(server) });
    expect(r.code, r.stderr).toBe(3);
    expect(snapshot(dir)).toEqual(before);
  });

  it('exit 2 on a malformed row late in the file: --split files byte-identical, no temp file', async () => {
    const rows = Array.from({ length: 3000 }, (_, i) => `n${i},u${i}@example.com`).join('\n');
    const dir = dirWith({ 'in.csv': `name,email\n${rows}\nbad,"x@example.com\n` });
    mkdirSync(join(dir, 'sorted'));
    writeFileSync(join(dir, 'sorted/unknown.csv'), 'an earlier run\n');
    const before = snapshot(dir);
    const r = await runInProcess(['validate', 'in.csv', '--split', 'sorted', ...LOCAL], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^mailsift: in\.csv: malformed CSV: Quote Not Closed/);
    expect(snapshot(dir)).toEqual(before);
  });

  it('a complete run replaces it, keeping its mode', async () => {
    const dir = dirWith({ 'in.csv': INPUT, ...OLD });
    chmodSync(join(dir, 'out.csv'), 0o640);
    const r = await runInProcess(['validate', 'in.csv', '-o', 'out.csv', ...LOCAL], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(dir, 'out.csv'), 'utf8')).toMatch(/^name,email,status,/);
    expect(readdirSync(dir).sort()).toEqual(['in.csv', 'out.csv', 's.json']);
    expect((await import('node:fs')).statSync(join(dir, 'out.csv')).mode & 0o777).toBe(0o640);
  });
});

describe('an output that cannot be written: one line naming what, exit 2', () => {
  it.each<[string, (dir: string) => string[], RegExp]>([
    ['a missing directory', () => ['-o', 'no/such/out.csv'], /^mailsift: cannot write no\/such\/out\.csv: no such directory \(ENOENT\)$/],
    ['a directory', (dir) => (mkdirSync(join(dir, 'd')), ['-o', 'd']), /^mailsift: cannot write d: it is a directory \(EISDIR\)$/],
    [
      'the summary in a missing directory',
      () => ['--summary', 'no/s.json'],
      /^mailsift: cannot write the summary to no\/s\.json: no such directory \(ENOENT\)$/,
    ],
  ])('%s', async (_name, setUp, why) => {
    const dir = dirWith({ 'in.csv': INPUT });
    const r = await runInProcess(['validate', 'in.csv', ...setUp(dir), ...LOCAL], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(why);
  });

  // Root ignores permission bits, so these two can only run as another user: as root
  // (CI) they are skipped, and say so in vitest's list of skipped tests.
  it.skipIf(process.getuid?.() === 0)('a directory without write permission (EACCES)', async () => {
    const dir = dirWith({ 'in.csv': INPUT });
    mkdirSync(join(dir, 'locked'), { mode: 0o555 });
    const r = await runInProcess(['validate', 'in.csv', '-o', 'locked/out.csv', ...LOCAL], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('mailsift: cannot write locked/out.csv: permission denied (EACCES)');
  });

  it.skipIf(process.getuid?.() === 0)('an existing output made read-only is not replaced behind its back (EACCES)', async () => {
    const dir = dirWith({ 'in.csv': INPUT, 'out.csv': 'protected\n' });
    chmodSync(join(dir, 'out.csv'), 0o444);
    const r = await runInProcess(['validate', 'in.csv', '-o', 'out.csv', ...LOCAL], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('mailsift: cannot write out.csv: permission denied (EACCES)');
    expect(readFileSync(join(dir, 'out.csv'), 'utf8')).toBe('protected\n');
  });
});

describe('input cells come out as they were read', () => {
  // What a CRM export holds: phone numbers, formulas, handles, quoted cells,
  // CRLF line ends, line breaks inside cells, spaces at either end.
  const EXPORT =
    'id,phone,note,handle,email\r\n' +
    '1,+1 555 0100,=SUM(A1:A3),@ann,ann@example.com\r\n' +
    '2,-42,"=HYPERLINK(""http://x"",""y"")",@bob ,"bob@example.com"\r\n' +
    '3,"+44 20 7946 0958","two\r\nlines, with a comma",  spaced  ,invalid.cy@example.com\r\n' +
    '4,\'quoted,-1+2,"tab\there",risky.di@example.com\r\n';
  const cells = (csv: string): string[][] => parse(csv, { relax_column_count: true }) as string[][];

  it('round-trips through validate -o with every input cell byte-identical; --escape-formulas defuses them', async () => {
    server = await startFaultServer({ apiKey: API_KEY });
    const dir = dirWith({ 'export.csv': EXPORT });
    const r = await runInProcess(['validate', 'export.csv', '-o', 'out.csv'], { cwd: dir, env: apiEnv(server) });
    expect(r.code, r.stderr).toBe(0);
    const input = cells(EXPORT);
    const output = cells(readFileSync(join(dir, 'out.csv'), 'utf8'));
    expect(output.map((row) => row.slice(0, 5))).toEqual(input);
    expect(output.slice(1).map((row) => row[5])).toEqual(['valid', 'valid', 'invalid', 'risky']);

    const escaped = await runInProcess(['validate', 'export.csv', '-o', 'escaped.csv', '--escape-formulas'], { cwd: dir, env: apiEnv(server) });
    expect(escaped.code, escaped.stderr).toBe(0);
    expect(cells(readFileSync(join(dir, 'escaped.csv'), 'utf8'))[1]!.slice(0, 5)).toEqual(['1', "'+1 555 0100", "'=SUM(A1:A3)", "'@ann", 'ann@example.com']);
    expect(existsSync(join(dir, 'export.csv'))).toBe(true);
  });
});
