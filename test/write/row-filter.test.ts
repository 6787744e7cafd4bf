import { describe, expect, it } from 'vitest';
import { keeps, parseTokens, statusesKept, type RowFilter } from '../../src/write/row-filter.js';
import { reasonOf } from '../../src/reason.js';
import { decide } from '../../src/engines/local/decide.js';
import type { Verdict } from '../../src/verdict.js';

const row = (c: Parameters<typeof decide>[1]): Verdict => decide('a@example.com', c);
const valid = row({ syntax: true, domain: 'example.com', dns: 'mx' });
const greylisted = row({ syntax: true, domain: 'example.com', dns: 'mx', smtpFailure: 'greylisted' });
const disposable = row({ syntax: true, domain: 'example.com', dns: 'mx', disposable: true });
const catchAll = row({ syntax: true, domain: 'example.com', dns: 'mx', mailbox: 'accepted', catchAll: true });
const typo = row({ syntax: true, domain: 'example.com', dns: 'mx', suggestion: 'a@gmail.com' });
const nxdomain = row({ syntax: true, domain: 'example.com', dns: 'nxdomain' });

const set = (s: string) => parseTokens(s) as Set<never>;

describe('--only / --except', () => {
  it.each<[string, RowFilter, Verdict[], Verdict[]]>([
    ['no filter keeps all', {}, [valid, disposable, nxdomain], []],
    ['--only a status', { only: set('valid') }, [valid], [greylisted, disposable, nxdomain]],
    ['--only a status and a reason', { only: set('valid,catch_all') }, [valid, catchAll], [disposable, typo]],
    ['the list-cleaning recipe', { only: set('valid,risky'), except: set('disposable,typo,mailbox_full') }, [valid, catchAll], [disposable, typo, nxdomain]],
    ['--except a status', { except: set('invalid') }, [valid, typo], [nxdomain]],
    ['a row the mailbox check could not tell about, by its reason', { only: set('greylisted') }, [greylisted], [valid]],
    ['... which is unknown, not valid', { only: set('unknown') }, [greylisted], [valid]],
  ])('%s', (_name, filter, kept, dropped) => {
    for (const v of kept) expect(keeps(filter, v, reasonOf(v))).toBe(true);
    for (const v of dropped) expect(keeps(filter, v, reasonOf(v))).toBe(false);
  });

  it('reads tokens in any case and refuses one that is neither a status nor a reason, naming both lists', () => {
    expect([...set(' Valid ,CATCH_ALL')]).toEqual(['valid', 'catch_all']);
    expect(parseTokens('valid,catchall')).toMatch(/^"catchall" is neither a status \(valid, .*\) nor a reason \(syntax, .*catch_all.*\)$/);
  });

  it('--split opens a file only for the statuses a kept row can have', () => {
    expect(statusesKept({})).toEqual(['valid', 'invalid', 'risky', 'unknown']);
    expect(statusesKept({ only: set('valid,catch_all') })).toEqual(['valid', 'risky']);
    expect(statusesKept({ only: set('smtp_timeout') })).toEqual(['unknown']);
    expect(statusesKept({ except: set('invalid,unknown') })).toEqual(['valid', 'risky']);
  });
});
