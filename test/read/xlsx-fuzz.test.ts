import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { MailsiftError } from '../../src/errors.js';
import { contacts, exceljsContacts, readTable } from '../support/contacts.js';
import { parseCsv } from '../support/run-cli.js';
import { runInProcess } from '../support/run-in-process.js';
import { excelParts, zip } from '../support/workbook.js';
import { seeded } from '../support/fault-server.js';

// Valid workbooks, mutated at random (seeded: a failure names the seed and
// mutation that reproduce it). Each result must be either the original rows,
// every one of them, or a refusal with exit code 2 and a one-line message —
// never another error (a bug: exit 1), never a hang, never fewer rows.
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_125);
const IN_PROCESS = Number(process.env.FUZZ_COUNT ?? 300);
const XML_MUTANTS = Math.round((IN_PROCESS * 2) / 3);
const THROUGH_MAIN = 6;
const dir = mkdtempSync(join(tmpdir(), 'mailsift-fuzz-'));

type Mutation = (b: Buffer, r: () => number) => { bytes: Buffer; what: string };
const at = (b: Buffer, r: () => number): number => Math.floor(r() * b.length);
/** where the zip's structures are (the directory at the end) mutations matter most: half of them go there */
const nearEnd = (b: Buffer, r: () => number): number => (r() < 0.5 ? b.length - 1 - Math.floor(r() * Math.min(b.length, 1200)) : at(b, r));
const MUTATIONS: Mutation[] = [
  (b, r) => {
    const out = Buffer.from(b);
    const i = nearEnd(b, r);
    out[i] = out[i]! ^ (1 << Math.floor(r() * 8));
    return { bytes: out, what: `flip a bit at ${i}` };
  },
  (b, r) => {
    const out = Buffer.from(b);
    const i = nearEnd(b, r);
    out[i] = Math.floor(r() * 256);
    return { bytes: out, what: `random byte at ${i}` };
  },
  (b, r) => {
    const out = Buffer.from(b);
    const i = Math.min(nearEnd(b, r), b.length - 4);
    out.writeUInt32LE(Math.floor(r() * 2 ** 32), i);
    return { bytes: out, what: `random 32-bit field at ${i}` };
  },
  (b, r) => {
    const n = at(b, r);
    return { bytes: b.subarray(0, n), what: `cut to ${n} bytes` };
  },
  (b, r) => {
    const i = at(b, r);
    const n = 1 + Math.floor(r() * 64);
    return { bytes: Buffer.concat([b.subarray(0, i), b.subarray(i + n)]), what: `${n} bytes removed at ${i}` };
  },
  (b, r) => {
    const i = at(b, r);
    const junk = Buffer.from(Array.from({ length: 1 + Math.floor(r() * 64) }, () => Math.floor(r() * 256)));
    return { bytes: Buffer.concat([b.subarray(0, i), junk, b.subarray(i)]), what: `${junk.length} bytes inserted at ${i}` };
  },
];

const bases: { name: string; bytes: Buffer; rows: string[][] }[] = [];

beforeAll(async () => {
  const add = async (name: string, bytes: Buffer): Promise<void> => {
    const path = join(dir, `base-${name}.xlsx`);
    writeFileSync(path, bytes);
    bases.push({ name, bytes, rows: await readTable(path) });
  };
  await add('excel-order', zip(excelParts(contacts(30).cells)));
  await add('libreoffice', readFileSync(new URL('../fixtures/xlsx/libreoffice-40.xlsx', import.meta.url)));
  await exceljsContacts(30, join(dir, 'exceljs.xlsx'));
  await add('exceljs', readFileSync(join(dir, 'exceljs.xlsx')));
});

/** The k-th mutated file of the run: the same for the same seed. */
function mutant(k: number): { bytes: Buffer; label: string; base: (typeof bases)[number] } {
  const r = seeded(SEED + k);
  const base = bases[k % bases.length]!;
  const m = MUTATIONS[Math.floor(r() * MUTATIONS.length)]!(base.bytes, r);
  return { bytes: m.bytes, base, label: `seed ${SEED} #${k} ${base.name}: ${m.what}` };
}

const within = <T>(p: Promise<T>, ms: number, label: string): Promise<T> =>
  Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${label}: no answer in ${ms} ms (a hang)`)), ms).unref())]);

/** Reads `path` within 10 s: its rows, or a refusal that must be one line with exit 2 (never a hang, a bug or a stack). */
async function readOrRefuse(path: string, label: string): Promise<{ rows: string[][] } | { error: MailsiftError }> {
  const result = await within(
    readTable(path).then(
      (rows) => ({ rows }),
      (error: unknown) => ({ error }),
    ),
    10_000,
    label,
  );
  if ('rows' in result) return result;
  expect(result.error, `${label}: ${String(result.error)}`).toBeInstanceOf(MailsiftError);
  expect((result.error as MailsiftError).exitCode, label).toBe(2);
  expect((result.error as Error).message, label).not.toContain('\n');
  return { error: result.error as MailsiftError };
}

describe('mutated workbooks', () => {
  it(`${IN_PROCESS} mutants in-process: the original rows, or a one-line refusal (exit 2)`, async () => {
    const outcomes = { read: 0, refused: 0 };
    for (let k = 0; k < IN_PROCESS; k++) {
      const { bytes, label, base } = mutant(k);
      const path = join(dir, `m${k}.xlsx`);
      writeFileSync(path, bytes);
      const result = await readOrRefuse(path, label);
      if ('rows' in result) {
        expect(result.rows, label).toEqual(base.rows);
        outcomes.read++;
      } else outcomes.refused++;
    }
    // the mutations reach both outcomes (else the fuzzing tests nothing)
    expect(outcomes.read).toBeGreaterThan(0);
    expect(outcomes.refused).toBeGreaterThan(IN_PROCESS / 3);
  }, 60_000);

  it(`${XML_MUTANTS} workbooks with mutated XML (sound zips, so the XML reader meets the damage): rows or a one-line refusal`, async () => {
    const parts = excelParts(contacts(30).cells);
    const xmlParts = ['xl/worksheets/sheet1.xml', 'xl/sharedStrings.xml', 'xl/styles.xml', 'xl/workbook.xml', 'xl/_rels/workbook.xml.rels'];
    const TOKENS = [
      '<',
      '>',
      '/>',
      '</c>',
      '<c r="A1" t="s">',
      '<v>',
      '</row>',
      '<row>',
      '&',
      '&#x0;',
      '&#99999999;',
      '"',
      '<!--',
      ']]>',
      '<![CDATA[',
      '<?',
      '_x000D_',
      '<si>',
      't="s"',
      's="99"',
    ];
    for (let k = 0; k < XML_MUTANTS; k++) {
      const r = seeded(SEED * 7 + k);
      const target = xmlParts[Math.floor(r() * xmlParts.length)]!;
      let what = '';
      const mutated = parts.map((p) => {
        if (p.name !== target) return p;
        const text = String(p.data);
        const i = Math.floor(r() * text.length);
        const n = Math.floor(r() * 12);
        const token = r() < 0.7 ? TOKENS[Math.floor(r() * TOKENS.length)]! : String.fromCharCode(Math.floor(r() * 128));
        what = `${target}: ${n} characters at ${i} replaced by ${JSON.stringify(token)}`;
        return { ...p, data: text.slice(0, i) + token + text.slice(i + n) };
      });
      const label = `seed ${SEED} xml #${k}: ${what}`;
      const path = join(dir, `x${k}.xlsx`);
      writeFileSync(path, zip(mutated));
      await readOrRefuse(path, label);
    }
  }, 60_000);

  it(`${THROUGH_MAIN} mutants through the whole command (main): exit 0 with every row, or exit 2 with one line; no stack trace`, async () => {
    for (let k = IN_PROCESS; k < IN_PROCESS + THROUGH_MAIN; k++) {
      const { bytes, label, base } = mutant(k);
      const path = join(dir, `b${k}.xlsx`);
      writeFileSync(path, bytes);
      const r = await runInProcess(['validate', path, '--engine', 'local', '--no-dns', '--columns', 'status', '-q'], {
        timeoutMs: 20_000,
      });
      expect([0, 2], `${label}: exit ${r.code} ${r.stderr}`).toContain(r.code);
      expect(r.stderr, label).not.toMatch(/^\s+at /m);
      if (r.code === 0)
        expect(
          parseCsv(r.stdout).map((row) => row.slice(0, -1)),
          label,
        ).toEqual(base.rows);
      else expect(r.stderr.trim().split('\n'), label).toHaveLength(1);
    }
  }, 120_000);
});
