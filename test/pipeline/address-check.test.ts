// The wrong file is refused before anything is sent, by the CLI and the
// library alike: a text that is no address list (a README), a CSV column or
// a sheet without addresses. In process: openAddressInput is what both read
// a file through, and validateFile is the library's door.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { validateFile, type Validator } from '../../src/index.js';
import { openAddressInput } from '../../src/pipeline/address-check.js';

const dir = mkdtempSync(join(tmpdir(), 'mailsift-address-check-'));
const file = (name: string, content: string): string => {
  writeFileSync(join(dir, name), content);
  return join(dir, name);
};

const README = `# mailsift\n\nBulk email validation from the command line.\n\n## Install\n\n    npm install -g mailsift\n\nQuestions: open an issue, or write to help@mailsift.example.\n${'Some prose about the tool, line after line.\n'.repeat(40)}`;

/** A validator that counts what it is asked: nothing may be sent for the wrong file. */
function counting(): Validator & { calls: number } {
  const v = {
    engine: 'api' as const,
    calls: 0,
    validate: async (emails: string[]) => {
      v.calls++;
      return emails.map((email) => ({ email, isValid: true, status: 'valid' as const, confidence: 1, provider: 'test', details: {} }));
    },
    stats: () => ({ requests: 0, retries: 0, rateLimited: 0 }),
    close: async () => {},
  };
  return v as unknown as Validator & { calls: number };
}

async function failure(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).exitCode).toBe(2);
    return (err as Error).message;
  }
  throw new Error('expected a refusal');
}

describe('a text input that is no address list', () => {
  it('a README (1 line in 45 with an address) is refused, naming the file and what it looks like', async () => {
    const path = file('README.md', README);
    expect(await failure(openAddressInput({ path }))).toBe(
      `${path} looks like prose or a document, not a list (1 of its 45 non-blank lines holds an address; a list has one address a line)`,
    );
  });

  it('a list with malformed lines among its addresses is read (most lines are one address each)', async () => {
    const lines = Array.from({ length: 100 }, (_, i) => (i % 5 < 3 ? `user${i}@mx.test` : `not an address ${i}`));
    const input = await openAddressInput({ path: file('messy.txt', `${lines.join('\n')}\n`) });
    let rows = 0;
    for await (const chunk of input.rows) rows += chunk.length;
    expect(rows).toBe(100);
  });

  it('stdin that is no address list is refused the same way', async () => {
    const { Readable } = await import('node:stream');
    const stdin = Readable.from([Buffer.from(README)]);
    expect(await failure(openAddressInput({ path: '-', stdin }))).toMatch(/^stdin looks like prose or a document, not a list/);
  });

  it('stdin whose first chunk is one address, then prose, is refused by the rows the check samples', async () => {
    const { Readable } = await import('node:stream');
    const stdin = Readable.from([Buffer.from('a@mx.test\n'), Buffer.from(README)]);
    expect(await failure(openAddressInput({ path: '-', stdin }))).toMatch(
      /^stdin looks like prose or a document, not a list \(2 of its 46 non-blank lines hold an address/,
    );
  });
});

describe("the library's validateFile runs the same check", () => {
  it('a found CSV column without addresses rejects before anything is sent, naming the right column', async () => {
    const v = counting();
    // the header names an address column, but the export left it unfilled; the addresses are under "contact"
    const path = file('people.csv', 'name,Email,contact\nAnn,n/a,ann@mx.test\nBob,n/a,bob@mx.test\n');
    const rows = validateFile(path, { validator: v });
    expect(await failure(rows.next())).toBe('column "Email" holds no addresses; column "contact" does: use --column contact');
    expect(v.calls).toBe(0);
  });

  it('a column named with column: is checked as it is, however few addresses it holds', async () => {
    const v = counting();
    const path = file(
      'sparse.csv',
      `name,email\n${Array.from({ length: 40 }, (_, i) => (i === 25 ? 'Zed,zed@mx.test' : `P${i},${i % 2 ? 'n/a' : ''}`)).join('\n')}\n`,
    );
    const out: string[] = [];
    for await (const r of validateFile(path, { validator: v, column: 'email' })) out.push(r.verdict.status);
    expect(out).toHaveLength(40);
    expect(out[25]).toBe('valid');
    expect(out.filter((s) => s === 'invalid')).toHaveLength(39);
    expect(v.calls).toBe(1);
  });

  it('a text file that is no address list rejects before anything is sent', async () => {
    const v = counting();
    expect(await failure(validateFile(file('notes.txt', README), { validator: v }).next())).toMatch(/notes\.txt looks like prose or a document/);
    expect(v.calls).toBe(0);
  });

  it('a right file still comes through, row for row', async () => {
    const v = counting();
    const out: string[] = [];
    for await (const r of validateFile(file('ok.csv', 'name,email\nAnn,ann@mx.test\n\nBob,bob@mx.test\n'), { validator: v }))
      out.push(`${r.fields.join('|')}:${r.verdict.status}`);
    expect(out).toEqual(['Ann|ann@mx.test:valid', '|:invalid', 'Bob|bob@mx.test:valid']);
  });
});
