import { describe, expect, it } from 'vitest';
import { addressesIn, addressLike } from '../../src/read/cell-addresses.js';

describe('the addresses a cell holds, as people paste them', () => {
  it.each<[string, string | string[]]>([
    // one address, as it is (trimmed)
    ['ann@example.com', 'ann@example.com'],
    ['  ann@example.com  ', 'ann@example.com'],
    ['', ''],
    ['   ', ''],
    // RFC 5322 name-addr
    ['Jane Doe <jane@x.example>', 'jane@x.example'],
    ['"Doe, Jane" <jane@x.example>', 'jane@x.example'],
    ['Doe, Jane <jane@x.example>', 'jane@x.example'],
    ['"a <b> c" <jane@x.example>', 'jane@x.example'],
    ['<jane@x.example>', 'jane@x.example'],
    ['Jane <mailto:jane@x.example>', 'jane@x.example'],
    // RFC 6068 mailto:
    ['mailto:jane@x.example', 'jane@x.example'],
    ['MAILTO:jane@x.example', 'jane@x.example'],
    ['mailto:jane@x.example?subject=Hello%2C%20world&body=Hi, there', 'jane@x.example'],
    ['mailto:jane%40x.example', 'jane@x.example'],
    ['mailto:j%C3%BCrgen@x.example', 'jürgen@x.example'],
    ['mailto:a@x.example,b@y.example', ['a@x.example', 'b@y.example']],
    ['mailto:?to=a@x.example&subject=x', 'a@x.example'],
    ['mailto:a@x.example?cc=b@y.example,c@z.example', 'a@x.example'],
    // lists, when every part holds an address
    ['a@x.example ::: b@y.example', ['a@x.example', 'b@y.example']],
    ['a@x.example; b@y.example;', ['a@x.example', 'b@y.example']],
    ['a@x.example, b@y.example', ['a@x.example', 'b@y.example']],
    ['Jane <jane@x.example>, "Doe, Bob" <bob@y.example>', ['jane@x.example', 'bob@y.example']],
    ['a@x.example;', 'a@x.example'],
    ['"a,b"@x.example', '"a,b"@x.example'],
    // not a list, and no address inside: the cell as it is, for the checks to reject
    ['call me, maybe', 'call me, maybe'],
    ['a@x.example, ask first', 'a@x.example, ask first'],
    ['mailto:', 'mailto:'],
    ['Jane <>', 'Jane <>'],
    ['user@[IPv6:2001:db8:::1]', 'user@[IPv6:2001:db8:::1]'],
    ['n/a', 'n/a'],
    ['@handle', '@handle'],
  ])('%j → %j', (cell, expected) => expect(addressesIn(cell)).toEqual(expected));

  it.each<[string, boolean]>([
    ['ann@example.com', true],
    ['@ann', false],
    ['ann@', false],
    ['a b@example.com', false],
    ['no at sign', false],
  ])('%j has the shape of an address: %s', (a, expected) => expect(addressLike(a)).toBe(expected));
});
