import { describe, expect, it } from 'vitest';
import { validateStream } from '../../../src/pipeline/validate-stream.js';
import type { Input, InputRow } from '../../../src/read/input-row.js';
import { precheck } from '../../../src/pipeline/precheck.js';
import { createLocalValidator } from '../../../src/engines/local/index.js';
import { parseAddress } from '../../../src/codec/syntax.js';
import type { Validator } from '../../../src/engines/validator.js';
import type { Verdict } from '../../../src/verdict.js';
import type { RowWriter } from '../../../src/write/row-writer.js';
import { Readable } from 'node:stream';
import { UsageError } from '../../../src/errors.js';
import { openInput } from '../../../src/read/open-input.js';
import { expectError, KEY, post, serve } from '../../serve/helpers.js';

// Half a UTF-16 character has no UTF-8 form: no mail server can receive it, and
// JSON (a `serve` request) can carry one as an escape.
const LONE = [
  ['a high surrogate alone in the local part', '\ud800@example.com'],
  ['a low surrogate alone in the local part', 'a\udc00b@example.com'],
  ['a low surrogate before a high one (a pair the wrong way round)', '\udc00\ud800@example.com'],
  ['a high surrogate at the end of a quoted local part', '"ab\ud800"@example.com'],
  ['a lone surrogate in the domain', 'a@exa\udc00mple.com'],
  ['a lone surrogate in an IDN domain', 'a@bü\ud800cher.de'],
];
const PAIRED = ['\ud83d\udca9@example.com', '"\ud83d\udca9 x"@example.com', 'a@b\u00fccher.de'];

describe('lone UTF-16 surrogates', () => {
  it.each(LONE)('the precheck rejects %s', (_why, email) => {
    expect(precheck(email)).toBe('lone UTF-16 surrogate');
  });
  it.each(LONE)('the offline syntax check rejects %s', (_why, email) => {
    expect(parseAddress(email)).toBeUndefined();
  });
  it.each(PAIRED)('a surrogate pair is a character like any other: %s', (email) => {
    expect(precheck(email)).toBeUndefined();
    expect(parseAddress(email)).toBeDefined();
  });

  it('the pipeline answers them `invalid` from the precheck and never sends them to the engine', async () => {
    const emails = ['\ud800@example.com', 'ok@example.com', 'a@exa\udc00mple.com'];
    const real = createLocalValidator({ dns: false });
    const sent: string[] = [];
    const validator: Validator = {
      engine: 'local',
      validate: (batch, signal) => {
        sent.push(...batch);
        return real.validate(batch, signal);
      },
      stats: () => real.stats(),
      close: () => real.close(),
    };
    const rows: InputRow[] = emails.map((email) => ({ fields: [email], email }));
    const input: Input = {
      kind: 'text',
      header: ['email'],
      emailColumn: 0,
      rows: (async function* () {
        yield rows;
      })(),
      close: () => {},
    };
    const written: Verdict[] = [];
    const writer: RowWriter = {
      begin: async () => {},
      row: (_fields, verdict) => void written.push(verdict),
      drain: async () => {},
      end: async () => {},
    };
    const { summary } = await validateStream({ input, validator, writer, batchSize: 10, concurrency: 1 });
    await validator.close();
    expect(sent).toEqual(['ok@example.com']);
    expect(written.map((v) => [v.email, v.status, v.provider])).toEqual([
      ['\ud800@example.com', 'invalid', 'precheck'],
      ['ok@example.com', 'valid', 'mailsift-local'],
      ['a@exa\udc00mple.com', 'invalid', 'precheck'],
    ]);
    expect(summary.prechecked).toBe(2);
  });

  it('`validate` on stdin refuses the bytes of a lone surrogate as invalid UTF-8 (a usage error), never as a replaced address', async () => {
    // ED A0 80 is U+D800 in CESU-8/WTF-8: not UTF-8
    const stdin = Readable.from([Buffer.concat([Buffer.from('ok@example.com\n'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('@example.com\n')])]);
    const read = async (): Promise<string[]> => {
      const input = await openInput({ path: '-', stdin });
      const emails: string[] = [];
      for await (const chunk of input.rows) for (const row of chunk) emails.push(row.email);
      return emails;
    };
    const err = await read().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).message).toMatch(/^stdin: invalid UTF-8/);
    expect((err as UsageError).message.split('\n')).toHaveLength(1);
  });

  it('the server of `mailsift serve` answers them invalid (syntax false) in a bulk request carrying JSON escapes', async () => {
    const s = await serve();
    try {
      const key = KEY;
      // JSON.stringify writes a lone surrogate as a \udXXX escape, as a client would
      const r = await post(s.url, '/api/validate/bulk', { emails: [...LONE.map(([, e]) => e), ...PAIRED] }, { key });
      expect(r.status).toBe(200);
      const results = r.json.results as Verdict[];
      expect(results.map((v) => [v.email, v.status, v.details?.syntax])).toEqual([
        ...LONE.map(([, e]) => [e, 'invalid', false]),
        ...PAIRED.map((e) => [e, 'valid', true]),
      ]);
      // the single endpoint answers a syntax failure with its documented error
      expectError(await post(s.url, '/api/validate', { email: '\ud800@example.com' }, { key }), 400, 'INVALID_EMAIL');
    } finally {
      await s.close();
    }
  });
});
