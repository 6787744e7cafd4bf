import { describe, expect, it } from 'vitest';
import { paint, terminalPolicy } from '../../src/terminal/style.js';

const tty = { isTTY: true, write: () => true };
const pipe = { isTTY: false, write: () => true };
/** a terminal that reports 0 columns: a line redrawn in place would scroll a copy per frame */
const narrow = { isTTY: true, columns: 0, write: () => true };

describe('terminalPolicy', () => {
  it.each([
    // stream, flags, env, color, animate, summary
    ['tty', {}, {}, true, true, true],
    ['pipe', {}, {}, false, false, true],
    ['tty', {}, { CI: 'true' }, true, false, true],
    ['tty', {}, { CI: 'false' }, true, true, true],
    ['tty', {}, { NO_COLOR: '1' }, false, true, true],
    ['tty', {}, { NO_COLOR: '' }, true, true, true],
    ['tty', {}, { TERM: 'dumb' }, false, false, true],
    ['tty', { color: false }, {}, false, true, true],
    ['tty', { progress: false }, {}, true, false, true],
    ['tty', { quiet: true }, {}, true, false, false],
    ['pipe', {}, { FORCE_COLOR: '1' }, true, false, true],
    ['tty', {}, { FORCE_COLOR: '0' }, false, true, true],
    ['pipe', { color: false }, { FORCE_COLOR: '1' }, false, false, true],
    ['narrow', {}, {}, true, false, true],
  ] as const)('%s %j %j → color %s, animate %s, summary %s', (kind, flags, env, color, animate, summary) => {
    expect(terminalPolicy({ tty, pipe, narrow }[kind], flags, env)).toEqual({ color, animate, summary });
  });
});

describe('paint', () => {
  it('adds escape codes only when colour is allowed', () => {
    expect(paint(true, 'red', 'x')).toBe('\x1b[31mx\x1b[39m');
    expect(paint(false, 'red', 'x')).toBe('x');
  });
});
