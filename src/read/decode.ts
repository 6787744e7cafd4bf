import { UsageError } from '../errors.js';

/**
 * Strict UTF-8 decoding of a byte stream (a BOM is dropped). Invalid UTF-8 is an
 * input error, never silently replaced by U+FFFD: that would change addresses.
 */
export async function* decodeUtf8(source: AsyncIterable<Buffer>, name: string): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let offset = 0;
  try {
    for await (const chunk of source) {
      const text = decoder.decode(chunk, { stream: true });
      offset += chunk.length;
      if (text) yield text;
    }
    const rest = decoder.decode();
    if (rest) yield rest;
  } catch (err) {
    if (err instanceof TypeError && (err as { code?: string }).code === 'ERR_ENCODING_INVALID_ENCODED_DATA') {
      throw new UsageError(`${name}: invalid UTF-8 near byte ${offset}; save the file as UTF-8`);
    }
    throw err;
  }
}

/**
 * Splits text chunks into lines (LF or CRLF), yielding the lines of each chunk
 * together; a final newline ends the last line.
 */
export async function* splitLines(chunks: AsyncIterable<string>): AsyncGenerator<string[]> {
  let rest = '';
  for await (const chunk of chunks) {
    const text = rest + chunk;
    const lines: string[] = [];
    let start = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
      lines.push(text.charCodeAt(nl - 1) === 13 && nl > start ? text.slice(start, nl - 1) : text.slice(start, nl));
      start = nl + 1;
    }
    rest = text.slice(start);
    if (lines.length) yield lines;
  }
  if (rest.length > 0) yield [rest.endsWith('\r') ? rest.slice(0, -1) : rest];
}
