import { createHash } from 'node:crypto';

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
}

export interface BindingOptions {
  engine: 'api' | 'local';
  baseUrl?: string;
  /** `--dns-server` of the local engine; undefined = system resolver */
  dnsServer?: string;
  /** the local engine's mailbox check (--smtp): it decides smtp, catch_all and the status */
  smtp?: boolean;
}

/**
 * Builds the binding of a run. What counts, and why:
 * - engine and base URL: a different service answers differently;
 * - the local engine's DNS server: it decides mx and hence the status;
 * - the local engine's mailbox check (--smtp): a verdict without it lacks smtp
 *   and catch_all, and its status may differ.
 * What does not count: batch size, concurrency, retries, timeouts, DNS timeout,
 * input column, output format and filters — they change how or where answers
 * are fetched or written, not what a finished verdict says. The API key does
 * not count either, so a rotated key resumes the same job.
 */
export function jobBinding(o: BindingOptions): JobBinding {
  const baseUrl = o.engine === 'api' && o.baseUrl ? normaliseBaseUrl(o.baseUrl) : undefined;
  // smtp only when on, so that the fingerprints of journals written without it stay as they were
  const smtp = o.engine === 'local' && o.smtp ? true : undefined;
  const relevant = { v: 1, engine: o.engine, baseUrl, dns: o.engine === 'local' ? (o.dnsServer ?? 'system') : undefined, smtp };
  const fingerprint = createHash('sha256').update(JSON.stringify(relevant)).digest('hex').slice(0, 16);
  return baseUrl === undefined ? { engine: o.engine, fingerprint } : { engine: o.engine, baseUrl, fingerprint };
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
  if (stored.fingerprint !== run.fingerprint) {
    return 'it was written with other validation options (e.g. --dns-server, --smtp)';
  }
  return undefined;
}
