import { describe, expect, it } from 'vitest';
import { booleanCell, columnLetters, escapeCellText, numberCell, textCell } from '../../src/write/xlsx-xml.js';

describe('the cells of an .xlsx sheet, as XML', () => {
  it.each([
    ['plain text is written as it is', 'ann@example.com', 'ann@example.com'],
    ['XML markup is escaped', 'a & <b> c', 'a &amp; &lt;b&gt; c'],
    // every XML parser turns CRLF (and a lone CR) into LF: only the escape keeps the CR
    ['CR is _x000D_, LF stays', 'line1\r\nline2\rx', 'line1_x000D_\nline2_x000D_x'],
    ['a tab stays (xml:space="preserve" keeps it)', 'a\tb', 'a\tb'],
    ['control characters XML cannot carry are _xHHHH_', 'x\u0001y\u001fz\u0000', 'x_x0001_y_x001F_z_x0000_'],
    ['a literal _xHHHH_ is escaped as Excel does, _x005F_', 'see _x0041_ and _x00e9_', 'see _x005F_x0041_ and _x005F_x00e9_'],
    ['an underscore that is no escape stays', 'first_name _x12_ _xZZZZ_', 'first_name _x12_ _xZZZZ_'],
    ['U+FFFE/U+FFFF and lone surrogates are _xHHHH_', 'a\ufffeb\uffff\ud800c\udc00', 'a_xFFFE_b_xFFFF__xD800_c_xDC00_'],
    ['a surrogate pair (an emoji) stays', 'ok \ud83d\ude00', 'ok \ud83d\ude00'],
  ])('%s', (_, text, xml) => {
    expect(escapeCellText(text)).toBe(xml);
  });

  it('writes text as an inline string with its spaces kept, never as t="str" (a formula\'s result)', () => {
    expect(textCell('C2', '  +1 555 0100 ')).toBe('<c r="C2" t="inlineStr"><is><t xml:space="preserve">  +1 555 0100 </t></is></c>');
    expect(numberCell('D2', 0.75)).toBe('<c r="D2"><v>0.75</v></c>');
    expect(booleanCell('E2', false)).toBe('<c r="E2" t="b"><v>0</v></c>');
  });

  it('names columns as Excel does, up to XFD', () => {
    expect([0, 25, 26, 51, 52, 701, 702, 16_383].map(columnLetters)).toEqual(['A', 'Z', 'AA', 'AZ', 'BA', 'ZZ', 'AAA', 'XFD']);
  });
});
