/**
 * Text that comes from the API is the server's to choose: unbounded and raw.
 * Every string taken from a response is capped here, at normalisation, so a
 * 10 MB `provider` never reaches a CSV cell (nor past Excel's 32,767 characters)
 * and a 10 MB `error.code` never becomes a stderr line or a summary field: a
 * server's bug or hostility must not make our outputs unreadable. The caps are
 * documented in docs/output.md.
 */
export const API_TEXT_CAPS = {
  /** `provider`: a service's name */
  provider: 100,
  /** `details.domain`: a DNS name is at most 253 characters */
  domain: 253,
  /** `details.suggestion`: an address is at most 254 */
  suggestion: 254,
  /** `error.code`: a token such as RATE_LIMITED */
  code: 64,
  /** the server's own words in --verbose */
  message: 200,
} as const;

/** C0, DEL, C1, and the bidi controls that reorder what a terminal shows (U+061C, U+200E/F, U+202A–E, U+2066–9). */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** At most `max` UTF-16 units, never half a surrogate pair. */
export function capText(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\ud800-\udbff]/.test(text[max - 1]!) ? max - 1 : max;
  return text.slice(0, end);
}

/**
 * For codes and messages, which are printed: control characters become a space
 * (a newline or an escape sequence from a server must not write on the user's
 * terminal), then the cap.
 */
export function cleanText(text: string, max: number): string {
  // one unit for one: cutting first spares a 10 MB scan
  return capText(text, max).replace(CONTROLS, ' ');
}

/**
 * `text` with every occurrence of the API key replaced: a gateway may echo the
 * request's `Authorization: Bearer KEY` in its error body, which `--verbose`
 * prints and a failure's text carries. Done before any cap, so that no cut
 * leaves a piece of the key behind. The key as sent and URL-encoded.
 */
export function redactKey(text: string, key: string): string {
  if (key.length < 4) return text; // a key that short would blank ordinary words; none is
  let out = text;
  for (const form of new Set([key, encodeURIComponent(key)])) if (out.includes(form)) out = out.split(form).join('[redacted]');
  return out;
}

/**
 * An answer's bytes without the key (see redactKey): a server may echo it in
 * an address's texts (an error message, the provider), which go to the output,
 * the journal and the report. One native search of the bytes when it is not
 * there, the common case: the URL-encoded form is looked for only when it is
 * another string (most keys have nothing to encode). Searched twice, the
 * million addresses of `npm run bench throughput` (210 MB of answers) spent
 * 0.24 s of CPU here, a twentieth of the run; once, 0.12 s.
 */
export function redactKeyBytes(bytes: Uint8Array, key: string): Uint8Array {
  if (key.length < 4) return bytes;
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const encoded = encodeURIComponent(key);
  if (!buf.includes(key) && (encoded === key || !buf.includes(encoded))) return bytes;
  return Buffer.from(redactKey(buf.toString('utf8'), key), 'utf8');
}
