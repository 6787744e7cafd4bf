import { isIP } from 'node:net';

/**
 * The SSRF guard of `serve`: anyone with an API key chooses the domain, and so
 * (through its MX records) where the server opens a connection. Without the
 * guard a key would let its holder make the server dial inside its own
 * network. Addresses that are not on the public internet are refused, and so
 * are MX names that are IP literals (no mail system publishes one).
 */

/** IPv4 ranges that are not the public internet (RFC 6890 and its kin), as [first octets, prefix length]. */
const V4_PRIVATE: readonly [string, number][] = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private (RFC 1918)
  ['100.64.0.0', 10], // carrier-grade NAT (RFC 6598)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
];

function v4Number(ip: string): number {
  return ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

function v4Private(ip: string): boolean {
  const n = v4Number(ip);
  return V4_PRIVATE.some(([base, bits]) => Math.floor(n / 2 ** (32 - bits)) === Math.floor(v4Number(base) / 2 ** (32 - bits)));
}

/** The 8 groups of an IPv6 address as numbers (an embedded dotted IPv4 tail included). */
function v6Groups(ip: string): number[] {
  let text = ip.toLowerCase().split('%')[0]!;
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail) {
    const n = v4Number(tail[1]!);
    text = text.slice(0, -tail[1]!.length) + `${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const a = head ? head.split(':') : [];
  const b = rest ? rest.split(':') : [];
  const fill = rest === undefined ? [] : Array(8 - a.length - b.length).fill('0');
  return [...a, ...fill, ...b].map((g) => parseInt(g, 16));
}

function v6Private(ip: string): boolean {
  const g = v6Groups(ip);
  // IPv4-mapped (::ffff:a.b.c.d) and the deprecated IPv4-compatible (::a.b.c.d): judge the IPv4 address
  if (g.slice(0, 5).every((x) => x === 0) && (g[5] === 0xffff || g[5] === 0)) {
    if (g[5] === 0 && g[6] === 0 && (g[7] === 0 || g[7] === 1)) return true; // :: and ::1
    return v4Private(`${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`);
  }
  const first = g[0]!;
  if (first === 0x64 && g[1] === 0xff9b) {
    // NAT64 (RFC 6052): the IPv4 address it reaches
    return v4Private(`${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`);
  }
  return (
    (first & 0xfe00) === 0xfc00 || // unique local fc00::/7
    (first & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (first & 0xffc0) === 0xfec0 || // site-local, deprecated
    (first & 0xff00) === 0xff00 || // multicast
    (first === 0x2001 && g[1] === 0x0db8) // documentation
  );
}

/** Why the guard refuses to dial `ip`, or undefined when it is a public address. */
export function privateAddress(ip: string): string | undefined {
  const family = isIP(ip);
  if (family === 4 ? v4Private(ip) : family === 6 ? v6Private(ip) : true) {
    return `${ip} is not a public internet address`;
  }
  return undefined;
}

/** An MX name that is an IP literal (`10.0.0.1`, `[10.0.0.1]`, `[IPv6:::1]`), not a host name. */
export function isIpLiteralName(name: string): boolean {
  const bare = name
    .replace(/^\[(ipv6:)?/i, '')
    .replace(/\]$/, '')
    .replace(/\.$/, '');
  return isIP(bare) !== 0 || /^\d+(\.\d+){0,3}$/.test(bare);
}
