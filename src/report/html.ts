import { printable } from '../format.js';

/**
 * HTML out of strings that may be hostile: an input file is anyone's, so an
 * address, a domain or a file name must never become markup. Every piece of
 * text goes through `text()`; markup is only ever built by `html` templates.
 */
export class Html {
  constructor(readonly markup: string) {}
  toString(): string {
    return this.markup;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * `value` as HTML text, safe in element content and in quoted attributes.
 * Control characters (a hostile cell may hold any) show as U+FFFD.
 */
export function text(value: string | number): Html {
  return new Html(
    String(value)
      .replace(/[&<>"']/g, (c) => ENTITIES[c]!)
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '\ufffd'),
  );
}

type Part = Html | string | number | readonly Part[] | undefined | false;

function render(part: Part): string {
  if (part === undefined || part === false) return '';
  if (part instanceof Html) return part.markup;
  if (Array.isArray(part)) return part.map(render).join('');
  return text(part as string | number).markup;
}

/**
 * A template whose substitutions are escaped unless already `Html`: markup
 * can only come from the template's own literal parts, so forgetting to
 * escape is not possible.
 */
export function html(strings: TemplateStringsArray, ...parts: Part[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < parts.length; i++) out += render(parts[i]) + strings[i + 1]!;
  return new Html(out);
}

/**
 * User data (a file name, a domain, an address) set apart from the text around
 * it, and its control characters shown as escapes: `<bdi>` keeps a
 * right-to-left override from reordering the page around it, but not the text
 * inside it (`…\u202Egpj.csv` would show as `…vsc.jpg`).
 */
export const userText = (value: string): Html => html`<bdi>${printable(value)}</bdi>`;
