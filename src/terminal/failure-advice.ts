import type { FailureCount } from '../engines/failure.js';
import { plural } from '../format.js';

export interface AdviceContext {
  /** where the base URL came from, as the user would name it: "--base-url" or "MAILSIFT_BASE_URL" */
  baseUrlSource: string;
  /** the --journal file, if the run has one */
  journal?: string;
}

/**
 * What to do about one cause of failed rows. A cause the user must fix first
 * (a wrong URL, a host that does not resolve) gets that fix, not "re-run":
 * re-running would fail the same way.
 */
function adviceFor(f: Pick<FailureCount, 'kind' | 'status'>, ctx: AdviceContext): string {
  const rerun = ctx.journal
    ? `re-run the same command later: --journal ${ctx.journal} keeps what was answered from being sent again`
    : 're-run later, with --journal FILE so that what was answered is not paid for again';
  const src = ctx.baseUrlSource;
  switch (f.kind) {
    case 'connect':
      return `nothing accepts connections there; is the API up, and is ${src} right?`;
    case 'dns':
      return `the host name does not resolve; check ${src} for a typo, and this machine's DNS`;
    case 'tls':
      return `check that ${src} has the right scheme (https:// for a TLS server, http:// only for a loopback one) and that the server's certificate is valid for that host`;
    case 'timeout':
      return `the API is slow or stalled: try a larger --timeout or a smaller --batch-size; ${rerun}`;
    case 'http':
      if (f.status === 404 || f.status === 405) {
        return `check ${src}: give the scheme and host only (plus a path prefix only if the API really has one); mailsift adds /api/validate/bulk`;
      }
      return 'the API rejected the request itself; run with --verbose to see its answer';
    case 'server':
    case 'network':
      return `the API is failing; ${rerun}`;
    case 'rate-limit':
      return `the rate limit did not reset within the wait allowed; ${rerun}`;
    case 'missing':
      return `the API did not answer for these addresses; ${rerun}`;
  }
}

/** One line per distinct cause: "could not connect to 127.0.0.1:1 (ECONNREFUSED): nothing accepts … (17 addresses without a verdict)" */
export function failureLines(failures: readonly FailureCount[], ctx: AdviceContext): { cause: string; addresses: number; advice: string; kind: string }[] {
  return failures.map((f) => ({ kind: f.kind, cause: f.text, addresses: f.addresses, advice: adviceFor(f, ctx) }));
}

export function renderFailure(f: { cause: string; addresses: number; advice: string }): string {
  return `${f.cause}: ${f.advice} (${plural(f.addresses, 'address', 'addresses')} without a verdict)`;
}
