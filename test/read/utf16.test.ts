import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeBytes, firstInvalidUtf16, sniffUnicode } from '../../src/read/decode.js';
import { binaryKind } from '../../src/read/file-kind.js';
import { parseCsv } from '../support/run-cli.js';
import { runInProcess } from '../support/run-in-process.js';

// UTF-16 without a byte-order mark whose text is mostly Chinese (few zero
// bytes), and a bad UTF-16 unit named where it is.
const LOCAL = ['--engine', 'local', '--no-dns', '-q'];
const ROWS = ['姓名,地址,备注,电子邮件'];
for (const [i, name] of ['张伟', '王芳', '李娜', '刘洋', '陈静'].entries()) {
  for (let k = 0; k < 4; k++) ROWS.push(`${name},北京市朝阳区建国路甲号院楼单元室,重要客户请优先联系并确认订单详情,用户${i}${k}@例子.中国`);
}
const CHINESE = ROWS.join('\n') + '\n';
const utf16be = (text: string): Buffer => Buffer.from(text, 'utf16le').swap16();

/** `email\nann@…` in UTF-16LE with a lone low surrogate inserted at byte `at` */
function badAt(at: number, bom: boolean): Buffer {
  const body = Buffer.from(`${bom ? '\ufeff' : ''}email\nann@example.com\nbob@example.com\n`, 'utf16le');
  return Buffer.concat([body.subarray(0, at), Buffer.from([0x00, 0xdc]), body.subarray(at)]);
}

async function decodeAll(bytes: Buffer, chunk: number, encoding?: string): Promise<string> {
  async function* chunks(): AsyncGenerator<Buffer> {
    for (let i = 0; i < bytes.length; i += chunk) yield bytes.subarray(i, i + chunk);
  }
  let text = '';
  for await (const t of decodeBytes(chunks(), 'in.csv', encoding)) text += t;
  return text;
}

describe('UTF-16 without a byte-order mark, mostly Chinese', () => {
  it('is told from its zero bytes (a sixth of the units here), LE and BE', () => {
    expect(sniffUnicode(Buffer.from(CHINESE, 'utf16le'))).toBe('utf-16le');
    expect(sniffUnicode(utf16be(CHINESE))).toBe('utf-16be');
  });

  it('zeros on one side that do not read as text: a binary file, with the hint that --encoding reads it', () => {
    const bytes = Buffer.from(CHINESE, 'utf16le');
    bytes.writeUInt16LE(0x0001, 10); // a control character: not text as it stands
    expect(binaryKind(bytes, false)).toBe('a binary file (if it is UTF-16 text without a byte-order mark, give --encoding utf-16le)');
    expect(binaryKind(Buffer.from([0, 1, 0, 2, 7, 0, 9, 0, 0, 0, 3, 3]), false)).toBe('a binary file');
  });
});

describe('a bad UTF-16 unit', () => {
  it.each([1, 3, 7, 1024])('is named at its byte, whatever the chunks (%i bytes each)', async (chunk) => {
    await expect(decodeAll(badAt(48, true), chunk)).rejects.toThrow('in.csv: invalid UTF-16LE at byte 48: a half of a surrogate pair alone');
    await expect(decodeAll(badAt(46, false), chunk)).rejects.toThrow('invalid UTF-16LE at byte 46');
    await expect(decodeAll(badAt(20, false), chunk, 'utf-16le')).rejects.toThrow('invalid UTF-16LE at byte 20');
  });

  it('firstInvalidUtf16: a low surrogate alone, a high one unpaired; a pair is fine', () => {
    const units = (...u: number[]): Buffer => Buffer.from(new Uint16Array(u).buffer);
    expect(firstInvalidUtf16(units(0x61, 0xd83d, 0xde00, 0x62), true)).toBe(8);
    expect(firstInvalidUtf16(units(0x61, 0xdc00), true)).toBe(2);
    expect(firstInvalidUtf16(units(0x61, 0xd83d, 0x62), true)).toBe(2);
    expect(firstInvalidUtf16(units(0x61, 0xd83d), true)).toBe(4); // more may follow
  });
});

describe('the command, in-process', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mailsift-utf16-'));
    await writeFile(join(dir, 'cn.csv'), Buffer.from(CHINESE, 'utf16le'));
    await writeFile(join(dir, 'bad.csv'), badAt(48, true));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('a BOM-less UTF-16 CSV of Chinese rows is read, every row', async () => {
    const r = await runInProcess(['validate', 'cn.csv', ...LOCAL], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    // written in the input's encoding, as a spreadsheet opened it
    const rows = parseCsv(r.stdoutBytes!.toString('utf16le'));
    expect(rows).toHaveLength(21);
    expect(rows[1]!.slice(0, 5)).toEqual(['张伟', '北京市朝阳区建国路甲号院楼单元室', '重要客户请优先联系并确认订单详情', '用户00@例子.中国', 'valid']);
  });

  it('a bad unit at byte 48 is reported at byte 48', async () => {
    const r = await runInProcess(['validate', 'bad.csv', ...LOCAL], { cwd: dir });
    expect([r.code, r.stderr]).toEqual([
      2,
      'mailsift: bad.csv: invalid UTF-16LE at byte 48: a half of a surrogate pair alone (the file starts with its byte-order mark)\n',
    ]);
  });
});
