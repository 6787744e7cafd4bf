import { describe, expect, it } from 'vitest';
import { networkOf } from '../../src/serve/client-network.js';

// Keyless requests (key guessing) are counted per network as well as per address.
describe('networkOf', () => {
  it.each([
    ['192.0.2.7', '192.0.2.0/24'],
    ['192.0.2.250', '192.0.2.0/24'],
    ['::ffff:192.0.2.7', '192.0.2.0/24'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::9', '2001:db8:1:2::/64'],
    ['2001:DB8:0:0:ffff::1', '2001:db8:0:0::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
    ['?', undefined],
    ['not-an-ip', undefined],
  ])('%s → %s', (address, network) => {
    expect(networkOf(address)).toBe(network);
  });
});
