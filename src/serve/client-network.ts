import { isIPv4, isIPv6 } from 'node:net';

/**
 * The network a client address belongs to, as one party usually holds it: its
 * /24 for IPv4, its /64 for IPv6 (the smallest prefix a site is given; one
 * host may use the whole /64). Requests without a valid key are counted per
 * network as well as per address, so that key guessing from many addresses of
 * one network is throttled as from one. An IPv4-mapped IPv6 address
 * (`::ffff:192.0.2.7`, what a dual-stack socket reports) is its IPv4 address.
 * Undefined for what is no IP address.
 */
export function networkOf(address: string): string | undefined {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  const v4 = mapped ?? address;
  if (isIPv4(v4)) return `${v4.split('.').slice(0, 3).join('.')}.0/24`;
  const bare = address.replace(/%.*$/, ''); // a zone (fe80::1%eth0) is no part of the address
  if (!isIPv6(bare)) return undefined;
  const groups = expand(bare);
  return groups === undefined
    ? undefined
    : `${groups
        .slice(0, 4)
        .map((g) => g.toString(16))
        .join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address (`::` expanded; a trailing dotted quad read as two groups). */
function expand(address: string): number[] | undefined {
  let text = address;
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const fill = 8 - left.length - right.length;
  if (fill < 0 || (tail === undefined && fill !== 0)) return undefined;
  return [...left, ...new Array<number>(fill).fill(0), ...right];
}
