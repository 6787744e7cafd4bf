import type { IncomingMessage } from 'node:http';
import { apiError, type ApiError } from './render.js';

/** The API's ceiling on addresses per bulk request: a bigger batch is refused. */
export const MAX_BULK = 1000;

export type BodyResult = { ok: true; body: Buffer } | { ok: false; error: ApiError };

const tooLarge = (limit: number): ApiError => apiError(413, 'PAYLOAD_TOO_LARGE', 'The request body is too large', `The body must not exceed ${limit} bytes`);

/**
 * Reads the body up to `limit` bytes. Past the limit it stops collecting and
 * answers at once; the caller closes the connection, so the rest of an oversize
 * body is never buffered.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<BodyResult> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve({ ok: false, error: tooLarge(limit) });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (result: BodyResult): void => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('aborted', onError);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) finish({ ok: false, error: tooLarge(limit) });
      else chunks.push(chunk);
    };
    const onEnd = (): void => finish({ ok: true, body: Buffer.concat(chunks, size) });
    // A client that vanishes mid-body gets no answer; the result only ends the handler.
    const onError = (): void =>
      finish({ ok: false, error: apiError(400, 'INVALID_REQUEST', 'The request body was cut off', 'The connection closed before the body ended') });
    req.on('data', onData).on('end', onEnd).on('error', onError).on('aborted', onError);
  });
}

/** application/json, any case, with or without parameters such as charset. */
export function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  return header.split(';')[0]!.trim().toLowerCase() === 'application/json';
}

const badRequest = (message: string, details: string): ApiError => apiError(400, 'INVALID_REQUEST', message, details);

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Decodes and parses a JSON object body, or says what is wrong with it. */
export function parseJsonObject(body: Buffer): { ok: true; value: Record<string, unknown> } | { ok: false; error: ApiError } {
  let text: string;
  try {
    text = decoder.decode(body);
  } catch {
    return { ok: false, error: badRequest('The request body is not valid UTF-8', 'Send the JSON body encoded as UTF-8') };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, error: badRequest('The request body is not valid JSON', 'The body could not be parsed as JSON') };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, error: badRequest('The request body must be a JSON object', 'Expected an object such as {"email": "..."}') };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

export function singleEmail(body: Record<string, unknown>): { ok: true; email: string } | { ok: false; error: ApiError } {
  const email = body['email'];
  if (email === undefined) return { ok: false, error: badRequest('Missing field: email', 'The body must hold "email", a string') };
  if (typeof email !== 'string') return { ok: false, error: badRequest('Wrong type: email', '"email" must be a string') };
  return { ok: true, email };
}

export function bulkEmails(body: Record<string, unknown>): { ok: true; emails: string[] } | { ok: false; error: ApiError } {
  const emails = body['emails'];
  if (emails === undefined) return { ok: false, error: badRequest('Missing field: emails', 'The body must hold "emails", an array of strings') };
  if (!Array.isArray(emails) || !emails.every((e) => typeof e === 'string')) {
    return { ok: false, error: badRequest('Wrong type: emails', '"emails" must be an array of strings') };
  }
  if (emails.length === 0) return { ok: false, error: badRequest('Empty field: emails', '"emails" must hold at least one address') };
  if (emails.length > MAX_BULK) {
    return {
      ok: false,
      error: apiError(400, 'TOO_MANY_EMAILS', 'Too many addresses in one request', `At most ${MAX_BULK} addresses per request; got ${emails.length}`),
    };
  }
  return { ok: true, emails };
}
