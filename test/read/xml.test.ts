import { describe, expect, it } from 'vitest';
import { XlsxError } from '../../src/errors.js';
import { XmlTokenizer } from '../../src/read/xml.js';

/** The text of every <t>, as a part fed in the chunks given. */
function texts(chunks: string[]): string[] {
  const out: string[] = [];
  let inT = false;
  const xml = new XmlTokenizer(
    {
      get wantText() {
        return inT;
      },
      open(name, _attrs, selfClosing) {
        if (name === 't' && !selfClosing) {
          inT = true;
          out.push('');
        }
      },
      close(name) {
        if (name === 't') inT = false;
      },
      text(t) {
        out[out.length - 1] += t;
      },
    },
    (reason) => new XlsxError(reason),
  );
  for (const c of chunks) xml.write(c);
  xml.end();
  return out;
}

describe('line ends as XML 1.0 §2.11 has a parser read them', () => {
  it('CR LF and a lone CR are one LF; a CR written as &#13; stays a CR', () => {
    expect(texts(['<si><t>a\r\nb</t><t>c\rd</t><t>e&#13;f</t><t>g\r\n\r\nh\r</t></si>'])).toEqual(['a\nb', 'c\nd', 'e\rf', 'g\n\nh\n']);
  });

  it('whatever the chunks: a CR LF cut between two chunks is still one LF', () => {
    const xml = '<si><t>a\r\nb</t><t>c\r</t><t>\nd</t><t>e\r\r\nf</t></si>';
    const whole = texts([xml]);
    expect(whole).toEqual(['a\nb', 'c\n', '\nd', 'e\n\nf']);
    for (let cut = 1; cut < xml.length; cut++) expect(texts([xml.slice(0, cut), xml.slice(cut)]), `cut at ${cut}`).toEqual(whole);
    expect(texts([...xml])).toEqual(whole);
  });
});
