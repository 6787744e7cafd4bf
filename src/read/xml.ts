import { XlsxError } from '../errors.js';

/**
 * How deep elements may nest. SpreadsheetML needs under a dozen levels
 * (worksheet > sheetData > row > c > is > r > t); a limit keeps a file of
 * twenty million nested elements from costing memory or time.
 */
export const MAX_XML_DEPTH = 128;
/** The longest tag, comment or processing instruction, in characters. */
export const MAX_XML_TAG = 1024 * 1024;

/** What a part's reader does with the elements it meets (names without their namespace prefix). */
export interface XmlHandler {
  open(name: string, attrs: string, selfClosing: boolean): void;
  close(name: string): void;
  /** text inside elements, entities decoded; called only while `wantText` is true */
  text(text: string): void;
  readonly wantText: boolean;
}

/**
 * A streaming XML tokenizer for the parts of a workbook: it keeps no element
 * stack (a depth count only) and never more than one tag or one unfinished
 * text run of the input, so its memory is bounded whatever the part holds.
 * It checks no more of XML than reading a workbook needs; a document type
 * declaration (never in Office files, and the vehicle of entity expansion
 * attacks) is refused.
 */
export class XmlTokenizer {
  private rest = '';
  private depth = 0;
  /** the last chunk ended with a CR: a LF that starts the next one belongs to it */
  private afterCr = false;

  constructor(
    private readonly handler: XmlHandler,
    private readonly fail: (reason: string) => XlsxError,
  ) {}

  write(chunk: string): void {
    // XML 1.0 §2.11: a parser reads CR LF and a lone CR as one LF, before
    // anything else (a CR that is meant stays one as `&#13;`, or Excel's `_x000D_`)
    if (this.afterCr && chunk.length > 0) {
      if (chunk.charCodeAt(0) === 0x0a) chunk = chunk.slice(1);
      this.afterCr = false;
    }
    if (chunk.indexOf('\r') >= 0) {
      this.afterCr = chunk.endsWith('\r');
      chunk = chunk.replace(/\r\n?/g, '\n');
    }
    const buf = this.rest + chunk;
    const h = this.handler;
    let i = 0;
    const n = buf.length;
    while (i < n) {
      const lt = buf.indexOf('<', i);
      if (lt !== i) {
        const end = lt < 0 ? n : lt;
        if (h.wantText) {
          // an entity cut by the chunk's end waits for the next chunk
          let upTo = end;
          if (lt < 0) {
            const amp = buf.lastIndexOf('&', end - 1);
            if (amp >= i && buf.indexOf(';', amp) < 0 && end - amp < 16) upTo = amp;
          }
          if (upTo > i) h.text(decodeEntities(buf.slice(i, upTo)));
          i = upTo;
          if (lt < 0) break;
        } else if (lt < 0) {
          i = n;
          break;
        }
        i = lt;
      }
      // a markup construct from i; an unfinished one waits for the next chunk
      const next = buf.charCodeAt(i + 1);
      if (next === 0x21 /* ! */) {
        if (buf.startsWith('<!--', i)) {
          const end = buf.indexOf('-->', i + 4);
          if (end < 0) break;
          i = end + 3;
        } else if (buf.startsWith('<![CDATA[', i)) {
          const end = buf.indexOf(']]>', i + 9);
          if (end < 0) break;
          if (h.wantText) h.text(buf.slice(i + 9, end));
          i = end + 3;
        } else if (n - i >= 9 || !'<!DOCTYPE'.startsWith(buf.slice(i, n))) {
          throw this.fail('a document type declaration (not allowed in a workbook)');
        } else break;
      } else if (next === 0x3f /* ? */) {
        const end = buf.indexOf('?>', i + 2);
        if (end < 0) break;
        i = end + 2;
      } else if (next === 0x2f /* / */) {
        const end = buf.indexOf('>', i + 2);
        if (end < 0) break;
        this.depth--;
        h.close(localName(buf.slice(i + 2, end).trimEnd()));
        i = end + 1;
      } else if (i + 1 < n) {
        const end = tagEnd(buf, i + 1);
        if (end < 0) break;
        const selfClosing = buf.charCodeAt(end - 1) === 0x2f;
        const body = buf.slice(i + 1, selfClosing ? end - 1 : end);
        let s = 0;
        while (s < body.length && !isSpace(body.charCodeAt(s))) s++;
        if (!selfClosing && ++this.depth > MAX_XML_DEPTH) {
          throw this.fail(`elements nested deeper than ${MAX_XML_DEPTH} levels (the limit)`);
        }
        h.open(localName(body.slice(0, s)), body.slice(s), selfClosing);
        i = end + 1;
      } else break;
    }
    this.rest = i < n ? buf.slice(i) : '';
    if (this.rest.length > MAX_XML_TAG) throw this.fail(`a tag longer than ${MAX_XML_TAG / 1024 / 1024} MB (the limit)`);
  }

  /** The part has ended: what is left must be nothing but an unfinished text run. */
  end(): void {
    if (this.rest.startsWith('<')) throw this.fail('it ends inside a tag (the part is cut short)');
    if (this.rest && this.handler.wantText) this.handler.text(decodeEntities(this.rest));
    this.rest = '';
  }
}

/** Index of the `>` closing the tag whose name starts at `from` (a quoted `>` skipped), or -1. A tag is short: one pass over it. */
function tagEnd(buf: string, from: number): number {
  let quote = 0;
  for (let j = from; j < buf.length; j++) {
    const c = buf.charCodeAt(j);
    if (quote) {
      if (c === quote) quote = 0;
    } else if (c === 0x3e) return j;
    else if (c === 0x22 || c === 0x27) quote = c;
  }
  return -1;
}

const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** `x:row` → `row`: some producers prefix the SpreadsheetML namespace. */
function localName(qname: string): string {
  const colon = qname.indexOf(':');
  return colon < 0 ? qname : qname.slice(colon + 1);
}

/** The value of attribute `name` (any namespace prefix) in a tag's attribute text, entities decoded. */
export function attr(attrs: string, name: string): string | undefined {
  let from = 0;
  for (;;) {
    const at = attrs.indexOf(name, from);
    if (at < 0) return undefined;
    from = at + name.length;
    const before = at === 0 ? 0x20 : attrs.charCodeAt(at - 1);
    if (!isSpace(before) && before !== 0x3a /* : */) continue;
    let j = from;
    while (isSpace(attrs.charCodeAt(j))) j++;
    if (attrs.charCodeAt(j) !== 0x3d /* = */) continue;
    j++;
    while (isSpace(attrs.charCodeAt(j))) j++;
    const quote = attrs[j];
    if (quote !== '"' && quote !== "'") continue;
    const close = attrs.indexOf(quote, j + 1);
    if (close < 0) return undefined;
    return decodeEntities(attrs.slice(j + 1, close));
  }
}

const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

export function decodeEntities(text: string): string {
  if (text.indexOf('&') < 0) return text;
  return text.replace(/&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z]{2,4});/g, (whole, ref: string) => {
    if (ref[0] !== '#') return NAMED[ref] ?? whole;
    const code = ref[1] === 'x' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}
