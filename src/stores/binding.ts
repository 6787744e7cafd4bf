import { createHash } from 'node:crypto';
import type { Evidence } from '../codec/verdict-encoding.js';

/**
 * What a journal or cache is bound to: verdicts are only reusable by a job that
 * would have got the same answers. Recorded in the file's first line; never
 * holds the API key (nor a hash of it: another key on the same service gives
 * the same verdicts).
 */
export interface JobBinding {
  engine: 'api' | 'local';
  /** normalised origin (+ path) of the API; absent for the local engine */
  baseUrl?: string;
  /** hash of the other validation-relevant options, see jobBinding */
  fingerprint: string;
  /**
   * the fingerprint older versions gave this job with --smtp, which then
   * counted: their files are still this job's (not written in a header)
   */
  legacyFingerprint?: string;
}

export interface BindingOptions {
  engine: 'api' | 'local';
  baseUrl?: string;
  /** `--dns-server` of the local engine; undefined = system resolver */
  dnsServer?: string;
  /** false with --no-dns: the local engine checks syntax and the lists only */
  dns?: boolean;
  /** the local engine's mailbox check (--smtp) */
  smtp?: boolean;
}

/**
 * Builds the binding of a run. What counts, and why:
 * - engine and base URL: a different service answers differently;
 * - the local engine's DNS server: it decides mx and hence the status.
 * What does not count: batch size, concurrency, retries, timeouts, DNS timeout,
 * input column, output format and filters — they change how or where answers
 * are fetched or written, not what a finished verdict says. The API key does
 * not count either, so a rotated key resumes the same job. Nor do --no-dns and
 * --smtp: how much a verdict rests on is in each record (evidenceOf), so one
 * cache serves runs of every depth, and a run that asks for more asks again.
 */
export function jobBinding(o: BindingOptions): JobBinding {
  const baseUrl = o.engine === 'api' && o.baseUrl ? normaliseBaseUrl(o.baseUrl) : undefined;
  const relevant = { v: 1, engine: o.engine, baseUrl, dns: o.engine === 'local' ? (o.dnsServer ?? 'system') : undefined };
  const binding: JobBinding =
    baseUrl === undefined ? { engine: o.engine, fingerprint: fingerprint(relevant) } : { engine: o.engine, baseUrl, fingerprint: fingerprint(relevant) };
  if (o.engine === 'local') binding.legacyFingerprint = fingerprint({ ...relevant, smtp: true });
  return binding;
}

function fingerprint(relevant: object): string {
  return createHash('sha256').update(JSON.stringify(relevant)).digest('hex').slice(0, 16);
}

/** What the run's verdicts rest on (see Evidence): the API, or as deep as the offline engine is asked to look. */
export function evidenceOf(o: BindingOptions): Evidence {
  if (o.engine === 'api') return 'api';
  return o.dns === false ? 'syntax' : o.smtp ? 'smtp' : 'dns';
}

/**
 * Scheme, host, port and path without a trailing slash; user info, query and
 * fragment are dropped, since they could carry a credential and never identify
 * the service.
 */
function normaliseBaseUrl(raw: string): string {
  try {
    const u = new URL(raw);
    return u.origin + u.pathname.replace(/\/+$/, '');
  } catch {
    return raw.replace(/[?#].*$/, '').replace(/\/+$/, '');
  }
}

/** The first difference between a file's binding and this run's, in words, or undefined. */
export function bindingDifference(stored: Partial<JobBinding>, run: JobBinding): string | undefined {
  if (stored.engine !== run.engine) return `it was written with --engine ${stored.engine ?? '?'}, this run uses --engine ${run.engine}`;
  if ((stored.baseUrl ?? '') !== (run.baseUrl ?? '')) {
    return `it was written against ${stored.baseUrl ?? 'no base URL'}, this run uses ${run.baseUrl ?? 'no base URL'}`;
  }
  if (stored.fingerprint !== run.fingerprint && stored.fingerprint !== run.legacyFingerprint) {
    return 'it was written with other validation options (--dns-server)';
  }
  return undefined;
}
