import { isIP } from 'node:net';
import { UsageError } from '../../errors.js';

/** `host[:port]` → the form `setServers` takes; a UsageError for anything else. */
export function parseDnsServer(value: string): string {
  let host = value.trim();
  let port: string | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(host);
  if (bracketed) {
    host = bracketed[1]!;
    port = bracketed[2];
  } else if (host.split(':').length === 2) {
    [host, port] = host.split(':') as [string, string];
  }
  const family = isIP(host);
  const portNumber = port === undefined ? 53 : Number(port);
  if (family === 0 || !Number.isInteger(portNumber) || portNumber < 1 || portNumber > 65535) {
    throw new UsageError(`--dns-server wants an IP address with an optional port (host[:port]), not "${value}"`);
  }
  if (port === undefined) return host;
  return family === 6 ? `[${host}]:${portNumber}` : `${host}:${portNumber}`;
}
