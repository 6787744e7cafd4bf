import { describe, expect, it } from 'vitest';
import { isIpLiteralName, privateAddress } from '../../../src/engines/local/smtp/guard.js';

describe("serve's SSRF guard", () => {
  it.each([
    ['127.0.0.1', true],
    ['127.10.0.5', true],
    ['10.1.2.3', true],
    ['172.16.0.1', true],
    ['172.31.255.255', true],
    ['172.32.0.1', false],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['100.127.255.255', true],
    ['100.128.0.1', false],
    ['0.0.0.0', true],
    ['224.0.0.1', true],
    ['239.255.255.255', true],
    ['255.255.255.255', true],
    ['8.8.8.8', false],
    ['93.184.216.34', false],
    ['192.0.2.1', false],
    ['::1', true],
    ['::', true],
    ['fe80::1', true],
    ['fc00::1', true],
    ['fd12:3456::1', true],
    ['ff02::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:10.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['::ffff:8.8.8.8', false],
    ['64:ff9b::10.0.0.1', true],
    ['64:ff9b::8.8.8.8', false],
    ['2001:db8::1', true],
    ['2a00:1450:4001::1b', false],
    ['not-an-ip', true],
  ])('%s private: %s', (ip, refused) => {
    expect(privateAddress(ip) !== undefined).toBe(refused);
  });

  it.each([
    ['127.0.0.1', true],
    ['[10.0.0.1]', true],
    ['[IPv6:::1]', true],
    ['10.0.0.1.', true],
    ['2130706433', true],
    ['mx.example.com', false],
    ['mx1.test', false],
  ])('MX name %s is an IP literal: %s', (name, literal) => {
    expect(isIpLiteralName(name)).toBe(literal);
  });
});
