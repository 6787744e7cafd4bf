import { describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { startDnsServer } from '../../support/dns-server.js';
import { runInProcess } from '../../support/run-in-process.js';

// The README's main job on fixtures/contacts.csv, as on a machine with no
// internet: a resolver that says NXDOMAIN to everything. Run in-process.
const ROOT = new URL('../../../', import.meta.url).pathname;

const run = (args: string[]) => runInProcess(args, { cwd: ROOT, timeoutMs: 20_000 });

describe('mailsift validate fixtures/contacts.csv without working DNS', () => {
  it('reports syntax, role, disposable and suggestions; DNS-dependent rows unknown, never invalid', async () => {
    const broken = await startDnsServer({ broken: true });
    const r = await run(['validate', 'fixtures/contacts.csv', '--dns-server', broken.address]);
    await broken.close();
    // the run's own DNS failed: exit 4, and said so (issue 31.1)
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/^mailsift: DNS failed: .* could not be checked/m);
    const rows = parse(r.stdout, { columns: true }) as Record<string, string>[];
    expect(rows).toHaveLength(20);
    const byId = new Map(rows.map((row) => [row.id, row]));
    const pick = (id: string) => {
      const row = byId.get(id)!;
      return [row.status, row.suggestion, row.role, row.disposable];
    };
    expect(pick('1')).toEqual(['unknown', '', 'false', 'false']);
    expect(pick('3')).toEqual(['risky', 'marta@gmail.com', 'false', 'false']);
    expect(pick('4')).toEqual(['risky', '', 'true', 'false']);
    expect(pick('5')).toEqual(['risky', '', 'false', 'true']);
    expect(pick('10')[0]).toBe('invalid');
    expect(pick('18')).toEqual(['unknown', '', 'false', 'false']); // gmx.com is not "corrected"
    expect(byId.get('11')).toMatchObject({ name: 'Müller, Jürgen', domain: 'xn--bcher-kva.de', status: 'unknown' });
    expect(byId.get('8')!.status).toBe('invalid');
    // invalid only where the address itself is wrong
    expect(rows.filter((row) => row.status === 'invalid').map((row) => row.id)).toEqual(['8', '9', '10', '20']);
    expect(r.stderr.match(/DNS is unusable/g)).toHaveLength(1);
  });
});
