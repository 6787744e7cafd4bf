import type { Summary } from '../summary.js';
import { plural } from '../format.js';

/**
 * What to tell the user when the run's own means failed (Summary.outage): one
 * line per cause, the same on stderr (even with --quiet: it is why the exit
 * code is 4) and in the HTML report.
 */
export function outageLines(summary: Pick<Summary, 'outage'>): string[] {
  const lines: string[] = [];
  const { dns, smtp } = summary.outage ?? {};
  if (dns) {
    lines.push(
      `DNS failed: the resolver answered nothing usable, so ${plural(dns, 'row', 'rows')} could not be checked (unknown, dns_error); ` +
        `they were not recorded as final: run again when DNS works (or with --dns-server), and a re-run with the same --journal checks them again`,
    );
  }
  if (smtp) {
    lines.push(
      `the mailbox check failed: no mail server could be reached (outbound port 25 looked blocked, or the SMTP proxy failed), so ${plural(smtp, 'row', 'rows')} could not be checked; ` +
        `they were not recorded as final: run again from a host that may connect to port 25, or through a working --smtp-proxy`,
    );
  }
  return lines;
}
