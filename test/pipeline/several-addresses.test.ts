// Rows with several addresses — several checked columns, cells that list
// several — through the real pipeline, in process: each address is sent once
// in the run, whichever row or column holds it; a row leaves in its place once
// its last address is answered; the deciding verdict speaks for the row, and a
// failed address is never hidden behind another's verdict.
import { describe, expect, it } from 'vitest';
import { validateStream } from '../../src/pipeline/validate-stream.js';
import { deciding } from '../../src/pipeline/row-verdict.js';
import { rowOf } from '../../src/read/cell-addresses.js';
import type { Input } from '../../src/read/input-row.js';
import type { Validator } from '../../src/engines/validator.js';
import { errorVerdict, type Status, type Verdict } from '../../src/verdict.js';
import type { CheckedCell, RowWriter } from '../../src/write/row-writer.js';
import type { Reason } from '../../src/reason.js';
import { precheckVerdict } from '../../src/pipeline/precheck.js';

const verdict = (email: string, status: Status, extra: Partial<Verdict> = {}): Verdict => ({
  email,
  isValid: status === 'unknown' ? undefined : status !== 'invalid',
  status,
  confidence: 0.9,
  provider: 'test',
  details: {},
  ...extra,
});

/** Answers by the local part (invalid…, risky…, unknown…, fail… gets no verdict), each batch after a delay that makes them cross. */
function recording(): Validator & { asked: string[] } {
  let calls = 0;
  const v = {
    engine: 'api' as const,
    asked: [] as string[],
    async validate(emails: readonly string[]): Promise<Verdict[]> {
      v.asked.push(...emails);
      await new Promise((r) => setTimeout(r, calls++ % 2 ? 1 : 15));
      return emails.map((e) => {
        if (e.startsWith('fail')) return errorVerdict(e, 'SERVER_ERROR', 'down');
        const status = (['invalid', 'risky', 'unknown'] as const).find((s) => e.startsWith(s)) ?? 'valid';
        return verdict(e, status, status === 'invalid' ? { details: { mx: false } } : {});
      });
    },
    stats: () => ({ requests: calls, retries: 0, rateLimited: 0 }),
    close: async () => {},
  };
  return v;
}

interface Written {
  fields: readonly string[];
  status: Status;
  reason: Reason | '';
  cells?: readonly CheckedCell[];
}

function collecting(): RowWriter & { rows: Written[] } {
  const rows: Written[] = [];
  return {
    rows,
    begin: async () => {},
    row: (fields, v, reason, cells) => void rows.push({ fields, status: v.status, reason, ...(cells ? { cells } : {}) }),
    drain: async () => {},
    end: async () => {},
  };
}

function table(header: string[], records: string[][], columns: number[]): Input {
  return {
    kind: 'csv',
    header,
    emailColumn: columns[0]!,
    emailColumns: columns,
    columnChoice: { columns, by: 'flag', others: [] },
    rows: (async function* () {
      yield records.map((r) => rowOf(r, columns));
    })(),
    close: () => {},
  };
}

describe('rows with several addresses', () => {
  const header = ['name', 'home', 'work'];
  const records = [
    ['Ann', 'ann@a.example ::: ann2@a.example', 'ann@w.example'],
    ['Bob', 'bob@a.example', ''],
    ['Cy', 'invalid.cy@a.example; cy@a.example', 'ann2@a.example'],
    ['Dee', '', ''],
    ['Eve', 'ann@w.example', 'ann@a.example'],
    ['Fay', 'n/a', 'risky.fay@w.example'],
  ];

  it('sends each address once, answers every cell, and writes row N as row N', async () => {
    const validator = recording();
    const writer = collecting();
    const { summary } = await validateStream({ input: table(header, records, [1, 2]), validator, writer, batchSize: 2, concurrency: 3 });
    expect([...validator.asked].sort()).toEqual(
      ['ann@a.example', 'ann2@a.example', 'ann@w.example', 'bob@a.example', 'invalid.cy@a.example', 'cy@a.example', 'risky.fay@w.example'].sort(),
    );
    expect(writer.rows.map((r) => r.fields[0])).toEqual(['Ann', 'Bob', 'Cy', 'Dee', 'Eve', 'Fay']);
    expect(writer.rows.map((r) => [r.status, r.reason])).toEqual([
      ['valid', ''],
      ['valid', ''],
      ['invalid', 'no_mail_server'],
      ['invalid', 'empty'],
      ['valid', ''],
      ['invalid', 'syntax'],
    ]);
    expect(writer.rows.map((r) => r.cells!.map((c) => `${c.verdict.status}/${c.reason}`))).toEqual([
      ['valid/', 'valid/'],
      ['valid/', 'invalid/empty'],
      ['invalid/no_mail_server', 'valid/'],
      ['invalid/empty', 'invalid/empty'],
      ['valid/', 'valid/'],
      ['invalid/syntax', 'risky/low_confidence'],
    ]);
    // a cell that lists several keeps each address's verdict, under its own spelling
    expect(writer.rows[2]!.cells![0]!.addresses!.map((a) => [a.verdict.email, a.verdict.status])).toEqual([
      ['invalid.cy@a.example', 'invalid'],
      ['cy@a.example', 'valid'],
    ]);
    // Eve's two addresses were both seen before: the row is a duplicate
    expect(summary).toMatchObject({ total: 6, valid: 3, invalid: 3, empty: 1, prechecked: 1, duplicates: 1 });
  });

  it('--unique leaves out a row whose every address came before', async () => {
    const writer = collecting();
    const { summary } = await validateStream({
      input: table(header, records, [1, 2]),
      validator: recording(),
      writer,
      batchSize: 100,
      concurrency: 1,
      filter: { unique: true },
    });
    expect(writer.rows.map((r) => r.fields[0])).toEqual(['Ann', 'Bob', 'Cy', 'Dee', 'Fay']);
    expect(summary.duplicatesRemoved).toBe(1);
  });

  it('an address without a verdict decides its row: counted as an error, whatever the other addresses are', async () => {
    const writer = collecting();
    const { summary } = await validateStream({
      input: table(['email'], [['invalid.x@a.example ::: fail.y@a.example'], ['ok@a.example']], [0]),
      validator: recording(),
      writer,
      batchSize: 10,
      concurrency: 1,
    });
    expect(writer.rows.map((r) => [r.status, r.reason])).toEqual([
      ['unknown', 'api_error'],
      ['valid', ''],
    ]);
    expect(summary.errors).toBe(1);
  });
});

describe('the deciding verdict of several', () => {
  const v = (s: Status) => verdict(`${s}@x.example`, s);
  it.each<[string, Verdict[], string]>([
    ['all valid: the first', [v('valid'), verdict('b@x.example', 'valid')], 'valid@x.example'],
    ['invalid over valid', [v('valid'), v('invalid')], 'invalid@x.example'],
    ['invalid over unknown and risky', [v('risky'), v('unknown'), v('invalid')], 'invalid@x.example'],
    ['unknown over risky', [v('risky'), v('unknown')], 'unknown@x.example'],
    ['risky over valid', [v('valid'), v('risky')], 'risky@x.example'],
    ['no verdict over invalid', [v('invalid'), errorVerdict('e@x.example', 'TIMEOUT', 't')], 'e@x.example'],
    ["the run's own outage over invalid", [v('invalid'), verdict('o@x.example', 'unknown', { outage: 'dns' })], 'o@x.example'],
    ['precheck invalid as any invalid: the first', [precheckVerdict('n/a'), v('invalid')], 'n/a'],
  ])('%s', (_name, verdicts, email) => expect(deciding(verdicts).email).toBe(email));
});
