/**
 * SMTP replies (RFC 5321 §4.2): `250-first line`, `250 last line`. A reply is
 * its three-digit code, the RFC 3463 enhanced status code when the server gives
 * one (`5.1.1`), and the text of its lines.
 */
export interface Reply {
  code: number;
  /** `class.subject.detail`, e.g. `5.1.1`; absent when the server gives none */
  enhanced?: string;
  /** the lines' text without code and enhanced code, joined with a space */
  text: string;
  /** the same, line by line (EHLO's keywords are one a line; Exim puts a quoted reply on lines of its own) */
  lines: string[];
}

const LINE = /^(\d{3})([ -])(.*)$/;
// `#5.7.1` is how Exchange 2003 and some appliances write it
const ENHANCED = /^#?([245])\.(\d{1,3})\.(\d{1,3})(?:\s+|$)/;
/** qmail and vpopmail's chkuser put it last, in brackets: `553 sorry, no mailbox here by that name. (#5.1.1 - chkuser)` */
const ENHANCED_LAST = /\(#([245])\.(\d{1,3})\.(\d{1,3})\b[^()]*\)\s*$/;
/** a line longer than this is not an SMTP server talking (RFC 5321 §4.5.3.1.5 allows 512) */
const MAX_LINE = 8192;
/** a reply of more lines than this is not one either (EHLO lists a dozen or two) */
const MAX_LINES = 200;

export class ReplyError extends Error {}

/**
 * Cuts a byte stream into replies. `push` takes what the socket read and
 * returns the replies it completed; a line that is not SMTP throws ReplyError.
 */
export class ReplyParser {
  private buffer = '';
  private lines: string[] = [];
  private code = 0;

  /** part of a reply has come and not all of it */
  get holding(): boolean {
    return this.buffer.length > 0 || this.lines.length > 0;
  }

  push(chunk: string): Reply[] {
    this.buffer += chunk;
    const done: Reply[] = [];
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl).replace(/\r$/, '');
      this.buffer = this.buffer.slice(nl + 1);
      const reply = this.line(line);
      if (reply) done.push(reply);
    }
    if (this.buffer.length > MAX_LINE) throw new ReplyError('a reply line longer than 8 KiB');
    return done;
  }

  private line(line: string): Reply | undefined {
    const m = LINE.exec(line) ?? (/^\d{3}$/.test(line) ? [line, line, ' ', ''] : null);
    if (!m) throw new ReplyError(`not an SMTP reply: ${JSON.stringify(line.slice(0, 80))}`);
    const code = Number(m[1]);
    if (this.lines.length > 0 && code !== this.code) throw new ReplyError(`a multi-line reply changed its code (${this.code} → ${code})`);
    this.code = code;
    this.lines.push(m[3]!);
    if (this.lines.length > MAX_LINES) throw new ReplyError('a reply of more than 200 lines');
    if (m[2] === '-') return undefined;
    const lines = this.lines;
    this.lines = [];
    return parseReplyLines(code, lines);
  }
}

/** One reply from its code and its lines' text (enhanced codes stripped from each line). */
export function parseReplyLines(code: number, lines: readonly string[]): Reply {
  let enhanced: string | undefined;
  const texts = lines.map((l) => {
    const m = ENHANCED.exec(l);
    // RFC 3463's class must agree with the reply's first digit; otherwise it is just text
    if (!m || Number(m[1]) !== Math.floor(code / 100)) return l;
    enhanced ??= `${m[1]}.${m[2]}.${m[3]}`;
    return l.slice(m[0].length);
  });
  if (enhanced === undefined && texts.length > 0) {
    const m = ENHANCED_LAST.exec(texts[texts.length - 1]!);
    if (m && Number(m[1]) === Math.floor(code / 100)) enhanced = `${m[1]}.${m[2]}.${m[3]}`;
  }
  const reply: Reply = { code, text: texts.join(' ').trim(), lines: texts.map((t) => t.trim()) };
  if (enhanced) reply.enhanced = enhanced;
  return reply;
}

/** `550 5.1.1 user unknown`, for messages; the text is cut short and made printable. */
export function showReply(r: Reply): string {
  const text = r.text.replace(/[^\x20-\x7e]/g, '?').slice(0, 200);
  return [r.code, r.enhanced, text].filter((p) => p !== undefined && p !== '').join(' ');
}
