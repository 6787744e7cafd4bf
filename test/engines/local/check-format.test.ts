import { describe, expect, it } from 'vitest';
import { formatVerdict } from '../../../src/cli/check-command.js';
import { checkOffline } from '../../../src/engines/local/index.js';

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
});
