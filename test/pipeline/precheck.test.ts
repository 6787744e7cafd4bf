import { describe, expect, it } from 'vitest';
import { precheck } from '../../src/pipeline/precheck.js';

describe('precheck (conservative: never rejects what an SMTP server accepts)', () => {
  it.each<[string, string | undefined]>([
    ['', 'empty'],
    ['plainaddress', 'no @'],
    [`${'a'.repeat(250)}@b.com`, 'longer than 254 characters'],
    ['a\u0000b@example.com', 'control character'],
    ['a b@example.com', 'white space'],
    ['a\u00a0b@example.com', 'white space'],
    ['ok@example.com', undefined],
    ['"john smith"@example.com', undefined],
    ['"a\\" b"@example.com', undefined],
    ['user@[192.168.0.1]', undefined],
    ['用户@例子.广告', undefined],
    ['a@b', undefined],
    ['@nolocal.com', 'nothing before the @'], // a handle pasted into an email column
    ['user@', 'nothing after the @'],
    ['@', 'nothing before the @'],
    ['""@example.com', undefined], // an empty quoted local part is the engine's to judge
  ])('%j → %s', (email, reason) => expect(precheck(email)).toBe(reason));
});
