import { afterAll, beforeAll } from 'vitest';
import { startDnsServer, type TestDnsServer } from './dns-server.js';

/**
 * The loopback DNS server for one test file, started before its tests and
 * stopped after them, with the flags that run the offline engine against it.
 */
export function localDnsForFile(): { readonly address: string; localFlags: () => string[] } {
  let dns: TestDnsServer | undefined;
  beforeAll(async () => {
    dns = await startDnsServer();
  });
  afterAll(async () => {
    await dns?.close();
  });
  return {
    get address() {
      return dns!.address;
    },
    // The loopback server answers every name these tests use at once: a timeout only ever
    // fires when the machine is loaded, and then a short one turns "valid" into "unknown".
    localFlags: () => ['--engine', 'local', '--dns-server', dns!.address, '--dns-timeout', '10000', '-q'],
  };
}
