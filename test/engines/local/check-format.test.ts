import { describe, expect, it } from 'vitest';
import { formatVerdict } from '../../../src/terminal/check-verdict.js';
import { checkOffline } from '../../../src/engines/local/index.js';
import { errorVerdict } from '../../../src/verdict.js';
import { resultObject } from '../../../src/write/verdict-columns.js';

describe('check output', () => {
  const verdict = checkOffline('marta@gmial.com');

  it('aligns the values on a terminal', () => {
    const lines = formatVerdict(verdict, { json: false, tty: true }).trimEnd().split('\n');
    expect(lines[0]).toBe('email:      marta@gmial.com');
    expect(lines).toContain('suggestion: marta@gmail.com');
    const column = lines.map((l) => /^\S+\s+/.exec(l)?.[0].length).filter((n) => n !== undefined);
    expect(new Set(column).size).toBe(1);
  });

  it('writes plain key: value lines elsewhere, an unknown value empty', () => {
    const text = formatVerdict(verdict, { json: false, tty: false });
    expect(text).toContain('status: risky\nreason: typo\n');
    expect(text).toContain('mx:\n');
  });

  it('--json is the Shape A item, with the reason', () => {
    expect(JSON.parse(formatVerdict(verdict, { json: true, tty: true }))).toEqual({
      email: 'marta@gmial.com',
      isValid: true,
      status: 'risky',
      reason: 'typo',
      confidence: 0.7,
      provider: 'mailsift-local',
      details: { syntax: true, domain: 'gmial.com', disposable: false, role: false, free: false, suggestion: 'marta@gmail.com' },
    });
  });

  it('--json of a verdict without an answer writes what validate writes: isValid and confidence null, the error', () => {
    const unknown = errorVerdict('ann@b.test', 'TIMEOUT', 'no answer in 30 s');
    const printed = JSON.parse(formatVerdict(unknown, { json: true, tty: false }));
    expect(printed).toEqual({
      email: 'ann@b.test',
      isValid: null,
      status: 'unknown',
      reason: 'api_error',
      confidence: null,
      provider: '',
      details: {},
      error: { code: 'TIMEOUT', message: 'no answer in 30 s' },
    });
    expect(printed).toEqual(JSON.parse(JSON.stringify(resultObject(unknown, 'api_error'))));
  });
});
