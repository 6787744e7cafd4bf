// Command lines planned in-process: argv (and environment) → the plan, or the
// one-line usage error the CLI prints with exit 2. The CLI's actions call the
// same planning, so what these tables say is what `mailsift` does; the
// spawned tests keep only what a real process shows (exit codes, stdio,
// signals, files, servers).
import { describe, expect, it } from 'vitest';
import { planCheck } from '../../src/cli/check/plan.js';
import type { PlanContext, Planned } from '../../src/cli/command.js';
import { planServe } from '../../src/cli/serve/plan.js';
import { planValidate } from '../../src/cli/validate/plan.js';

const KEY = 'sk_test_SECRET_4f9d2c';
const API = { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: 'https://api.example.com' };
/** stdin and stdout piped, as in a script: the default context of these tables */
const context = (env: Record<string, string> = {}, tty: Partial<PlanContext> = {}): PlanContext => ({
  // no key that `mailsift login` stored on this machine counts
  env: { XDG_CONFIG_HOME: '/nonexistent/mailsift-plan-test', ...env },
  stdinIsTTY: false,
  stdoutIsTTY: false,
  ...tty,
});

function errorOf<P>(planned: Planned<P>): string {
  if (!('error' in planned)) throw new Error(`expected a usage error, got ${JSON.stringify(planned).slice(0, 300)}`);
  expect(planned.error.exitCode).toBe(2);
  const message = planned.error.message;
  // one line; commander's "(Did you mean …?)" is the one second line
  expect(
    message.split('\n').filter((l) => !/^\(Did you mean/.test(l)),
    'one line',
  ).toHaveLength(1);
  return message;
}
function planOf<P>(planned: Planned<P>): P {
  if (!('plan' in planned)) throw new Error(`expected a plan, got ${JSON.stringify(planned).slice(0, 300)}`);
  return planned.plan;
}

describe('validate: usage errors', () => {
  const cases: [string, string[], Record<string, string>, RegExp][] = [
    ['an unknown flag', ['in.csv', '--bogus'], {}, /^unknown option '--bogus'$/],
    ['a mistyped flag gets a suggestion', ['in.csv', '--fail-of', 'invalid>1'], {}, /unknown option '--fail-of'\s*\(Did you mean --fail-on\?\)/],
    [
      '--batch-size 5000',
      ['in.csv', '--batch-size', '5000'],
      {},
      /^option '--batch-size <n>' argument '5000' is invalid\. expected a whole number from 1 to 1000$/,
    ],
    ['--batch-size 0', ['in.csv', '--batch-size', '0'], {}, /--batch-size <n>.*expected a whole number from 1 to 1000/],
    ['--concurrency 0', ['in.csv', '--concurrency', '0'], {}, /--concurrency <n\|auto>.*expected auto or a whole number from 1 to 64/],
    ['--only with a typo', ['in.csv', '--only', 'vaild'], {}, /"vaild" is neither a status \(valid, invalid, risky, unknown\) nor a reason \(syntax, /],
    ['--format yaml', ['in.csv', '--format', 'yaml'], {}, /expected csv, json, ndjson, txt, xlsx/],
    ['a bad --fail-on rule', ['in.csv', '--fail-on', 'invalid'], {}, /cannot read rule "invalid"/],
    ['an unknown --encoding', ['in.csv', '--encoding', 'klingon'], {}, /^--encoding klingon: unknown encoding/],
    [
      'a bad --cache-ttl',
      ['in.csv', '--cache', 'v.cache', '--cache-ttl', 'a month'],
      {},
      /^option '--cache-ttl <duration>' argument 'a month' is invalid\. expected a duration with a unit, e\.g\. 30d, 12h, 90m or 3600s$/,
    ],
    // issue 31.6: a number alone was 30 seconds where the default is 30d
    [
      '--cache-ttl without a unit',
      ['in.csv', '--cache', 'v.cache', '--cache-ttl', '30'],
      {},
      /^option '--cache-ttl <duration>' argument '30' is invalid\. a number alone is ambiguous: add a unit, e\.g\. 30d for days, 30h, 30m or 30s$/,
    ],
    [
      '--timeout past its range',
      ['in.csv', '--timeout', '2h'],
      {},
      /^option '--timeout <seconds>' argument '2h' is invalid\. expected a duration from 1ms to 1h$/,
    ],
    ['--engine smtp', ['in.csv', '--engine', 'smtp'], {}, /argument 'smtp' is invalid\. Allowed choices are api, local/],
    [
      'a bad --dns-server',
      ['in.csv', '--engine', 'local', '--dns-server', 'dns.example'],
      {},
      /^option '--dns-server <host\[:port\]>' argument 'dns\.example' is invalid\. expected an IP address with an optional port \(host\[:port\]\), e\.g\. 127\.0\.0\.1:5353$/,
    ],
    // output flags that do not fit together
    [
      '--columns with an unknown name',
      ['in.csv', '--columns', 'status,statuz'],
      {},
      /^--columns: no column "statuz" \(columns: email, status, reason, is_valid/,
    ],
    ['--columns naming one twice', ['in.csv', '--columns', 'status,status'], {}, /"status" is named twice/],
    ['--split with -o', ['in.csv', '--split', 'x', '-o', 'x.csv'], {}, /^--split and -o\/--output do not go together/],
    ['--columns with ndjson', ['in.csv', '--columns', 'status', '--format', 'ndjson'], {}, /^--columns shapes CSV, Excel and text output/],
    ['--columns with txt', ['in.csv', '--columns', 'status', '--format', 'txt'], {}, /^--columns and --format txt do not go together/],
    // the CSV output's dialect: flags for CSV only, a BOM only where the encoding has one
    [
      '--output-delimiter of two characters',
      ['in.csv', '--output-delimiter', ';;'],
      {},
      /^option '--output-delimiter <char>' argument ';;' is invalid\. expected one character other than a quote or a line break/,
    ],
    ['--output-delimiter as the quote', ['in.csv', '--output-delimiter', '"'], {}, /--output-delimiter <char>.*expected one character other than a quote/],
    [
      '--output-eol crlf2',
      ['in.csv', '--output-eol', 'crlf2'],
      {},
      /^option '--output-eol <lf\|crlf\|cr>' argument 'crlf2' is invalid\. expected lf, crlf or cr$/,
    ],
    ['an unknown --output-encoding', ['in.csv', '--output-encoding', 'klingon'], {}, /^--output-encoding klingon: unknown encoding/],
    [
      '--bom with an encoding that has none',
      ['in.csv', '--bom', '--output-encoding', 'windows-1252'],
      {},
      /^--bom: windows-1252 has no byte-order mark; for UTF-8 with one, add --output-encoding utf-8$/,
    ],
    ['--bom with JSON', ['in.csv', '--bom', '--format', 'json'], {}, /^--bom is for CSV output/],
    ['--no-bom with xlsx', ['in.csv', '--no-bom', '-o', 'x.xlsx'], {}, /^--no-bom is for CSV output/],
    ['--output-delimiter with ndjson', ['in.csv', '--output-delimiter', ';', '--format', 'ndjson'], {}, /^--output-delimiter is for CSV output/],
    // the engine: where each value came from is named, never the key
    ['a key without an address', ['in.csv'], { MAILSIFT_API_KEY: KEY }, /^no API address: pass --base-url URL or set MAILSIFT_BASE_URL$/],
    [
      'plain http to a non-loopback host',
      ['in.csv', '--base-url', 'http://api.example.com'],
      { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: 'x' },
      /^--base-url http:\/\/api\.example\.com: plain http is only allowed to loopback; use https$/,
    ],
    [
      'a bad MAILSIFT_BASE_URL, blamed on the variable',
      ['in.csv'],
      { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: 'api.example.com/v1' },
      /^MAILSIFT_BASE_URL api\.example\.com\/v1: not a URL \(expected e\.g\. https:\/\/api\.example\.com\)$/,
    ],
    [
      'a key file that is not there',
      ['in.csv', '--api-key-file', '/no/such/key'],
      { MAILSIFT_BASE_URL: 'https://api.example.com' },
      /^--api-key-file \/no\/such\/key: no such file \(ENOENT\)$/,
    ],
    [
      'credentials in the base URL',
      ['in.csv', '--base-url', 'https://u:pw-9@api.example.com'],
      { MAILSIFT_API_KEY: KEY },
      /^--base-url: credentials in the URL are not allowed$/,
    ],
    ['another scheme', ['in.csv', '--base-url', 'ftp://api.example.com'], { MAILSIFT_API_KEY: KEY }, /^--base-url ftp:…: expected an http\(s\) URL$/],
    // issue 31.5: the flag a newcomer guesses first says where a key goes, without echoing it
    [
      '--api-key KEY',
      ['in.csv', '--api-key', KEY],
      {},
      /^--api-key: keys never go in flags \(ps and shell history show them\); set MAILSIFT_API_KEY, pass --api-key-file FILE or run "mailsift login"$/,
    ],
    ['--api-key=KEY before the input', ['--api-key=' + KEY, 'in.csv'], API, /^--api-key: keys never go in flags/],
    ['a key with spaces', ['in.csv'], { ...API, MAILSIFT_API_KEY: `${KEY} extra` }, /^MAILSIFT_API_KEY: expected one key, without spaces or line breaks$/],
    // --smtp
    [
      '--smtp on the API engine',
      ['-', '--smtp', '--engine', 'api', '--base-url', 'http://127.0.0.1:9'],
      { MAILSIFT_API_KEY: 'k' },
      /--smtp is a check of the offline engine: add --engine local/,
    ],
    [
      'a bad --smtp-from',
      ['-', '--engine', 'local', '--smtp', '--smtp-from', 'not an address'],
      {},
      /^option '--smtp-from <address>' argument 'not an address' is invalid\. expected an address \(you@your-domain\.example\) or <>$/,
    ],
    [
      'a bad --smtp-helo',
      ['-', '--engine', 'local', '--smtp', '--smtp-helo', 'a b'],
      {},
      /^option '--smtp-helo <name>' argument 'a b' is invalid\. expected a host name/,
    ],
    ['--smtp-port 0', ['-', '--engine', 'local', '--smtp', '--smtp-port', '0'], {}, /--smtp-port <n>.*expected a whole number from 1 to 65535/],
    // a Redis cache's URL is checked when planned, before the input is read
    ['a --cache redis:// URL that is none', ['in.csv', '--cache', 'redis://u:pw-9@[::1'], {}, /^--cache: not a URL \(expected redis:\/\//],
  ];
  it.each(cases)('%s', async (_name, argv, env, message) => {
    const text = errorOf(await planValidate(argv, context(env)));
    expect(text).toMatch(message);
    expect(text).not.toContain(KEY);
    expect(text).not.toContain('pw-9');
  });

  it.each([
    ['--engine api', ['in.csv', '--engine', 'api'], {}],
    ['MAILSIFT_BASE_URL is set', ['in.csv'], { MAILSIFT_BASE_URL: 'https://api.example.com' }],
  ] as [string, string[], Record<string, string>][])('the API asked for (%s) without a key: exit 3, not a quiet offline run', async (why, argv, env) => {
    const planned = await planValidate(argv, context(env));
    if (!('error' in planned)) throw new Error('expected an error');
    expect(planned.error.exitCode).toBe(3);
    expect(planned.error.message).toBe(`no API key (${why}): set MAILSIFT_API_KEY, pass --api-key-file FILE or run "mailsift login" (or use --engine local)`);
  });

  it('no input: a terminal on stdin is not one', async () => {
    expect(errorOf(await planValidate([], context({}, { stdinIsTTY: true })))).toBe(
      'no input: give a file (mailsift validate contacts.csv) or pipe addresses on stdin',
    );
  });

  it('an Excel workbook is not written to a terminal, but may go to a pipe or a file', async () => {
    expect(errorOf(await planValidate(['in.csv', '--format', 'xlsx'], context({}, { stdoutIsTTY: true })))).toMatch(
      /an Excel workbook is binary; write it to a file with -o/,
    );
    expect(planOf(await planValidate(['in.csv', '--format', 'xlsx'], context())).output.format).toBe('xlsx');
    expect(planOf(await planValidate(['in.csv', '-o', 'out.xlsx'], context({}, { stdoutIsTTY: true }))).output).toMatchObject({
      format: 'xlsx',
      file: 'out.xlsx',
    });
  });

  it('a malformed MAILSIFT_SMTP_PROXY does not echo its password', async () => {
    const text = errorOf(await planValidate(['-', '--engine', 'local', '--smtp'], context({ MAILSIFT_SMTP_PROXY: 'http://ann:pw-9@127.0.0.1:1' })));
    expect(text).toMatch(/^MAILSIFT_SMTP_PROXY wants a socks5:\/\//);
    expect(text).not.toContain('pw-9');
  });
});

describe('validate: plans', () => {
  const cases: [string, string[], Record<string, string>, object][] = [
    [
      'stdin, no key: the offline engine, and it says why',
      [],
      {},
      {
        input: '-',
        engine: { engine: 'local', notice: expect.stringMatching(/^no API key configured .*using the offline engine$/) },
        output: { format: 'csv' },
      },
    ],
    ['--engine local says nothing', ['in.csv', '--engine', 'local'], {}, { input: 'in.csv', engine: { engine: 'local' } }],
    [
      'a key in the environment: the API engine, each value named by where it came from',
      ['in.csv'],
      API,
      { engine: { engine: 'api', baseUrl: 'https://api.example.com', apiKey: KEY, keySource: 'MAILSIFT_API_KEY', baseUrlSource: 'MAILSIFT_BASE_URL' } },
    ],
    [
      'the flag beats the variable, and a trailing slash goes',
      ['in.csv', '--base-url', 'http://127.0.0.1:8080/'],
      API,
      { engine: { engine: 'api', baseUrl: 'http://127.0.0.1:8080', baseUrlSource: '--base-url' } },
    ],
    ['the output format from the file name', ['in.csv', '-o', 'out.ndjson'], {}, { output: { format: 'ndjson', file: 'out.ndjson' } }],
    ['-o - is stdout', ['in.csv', '-o', '-', '--format', 'json'], {}, { output: { format: 'json', file: undefined } }],
    [
      '--split with --only: a file per status kept',
      ['in.csv', '--split', 'sorted', '--only', 'valid,risky'],
      {},
      { output: { split: { dir: 'sorted', statuses: ['valid', 'risky'] } } },
    ],
    ['--columns in the order given', ['in.csv', '--columns', 'is_valid,status'], {}, { output: { columns: ['is_valid', 'status'] } }],
    ['the CSV output follows the input unless told', ['in.csv'], {}, { output: { dialect: {} } }],
    [
      'the dialect flags, typed',
      ['in.csv', '--output-delimiter', 'tab', '--output-eol', 'CRLF', '--output-encoding', 'utf-16le', '--bom'],
      {},
      { output: { dialect: { delimiter: '\t', eol: '\r\n', encoding: 'utf-16le', bom: true } } },
    ],
    ['--no-bom', ['in.csv', '--no-bom', '--output-delimiter', '|'], {}, { output: { dialect: { bom: false, delimiter: '|' } } }],

    [
      'defaults of the option table, typed',
      ['in.csv'],
      {},
      {
        batching: { batchSize: 1000, concurrency: 'auto' },
        stores: { cacheTtlMs: 30 * 86_400_000 },
        engineSettings: { timeoutMs: 30_000, retries: 5, dnsTimeoutMs: 2000, dns: true, verbose: false },
        terminal: { progress: true, color: true },
        dryRun: false,
      },
    ],
    [
      'numbers parsed by the table',
      ['in.csv', '--batch-size', '7', '--concurrency', '64', '--timeout', '0.5', '--retries', '0'],
      {},
      { batching: { batchSize: 7, concurrency: 64 }, engineSettings: { timeoutMs: 500, retries: 0 } },
    ],
    [
      'durations with a unit',
      ['in.csv', '--cache', 'v.cache', '--cache-ttl', '12h', '--timeout', '500ms', '--dns-timeout', '2s', '--no-dns'],
      {},
      { stores: { cache: { kind: 'file', path: 'v.cache' }, cacheTtlMs: 12 * 3_600_000 }, engineSettings: { timeoutMs: 500, dnsTimeoutMs: 2000, dns: false } },
    ],
    // --cache told apart once, when planned: a file or a Redis server, its password kept from every message
    [
      '--cache redis://',
      ['in.csv', '--cache', 'rediss://:pw-9@10.0.0.1:6380/2'],
      {},
      { stores: { cache: { kind: 'redis', redis: { url: 'rediss://:pw-9@10.0.0.1:6380/2', shown: 'rediss://:***@10.0.0.1:6380/2', tls: true } } } },
    ],
    [
      '--fail-on rules gather across flags',
      ['in.csv', '--fail-on', 'invalid>5%', '--fail-on', 'errors>0'],
      {},
      { failOn: [expect.objectContaining({ metric: 'invalid' }), expect.objectContaining({ metric: 'errors' })] },
    ],
    [
      '--smtp: the settings, defaults from the table',
      ['-', '--engine', 'local', '--smtp', '--smtp-helo', 'mx.example.com'],
      {},
      { smtp: { helo: 'mx.example.com', from: '', port: 25, timeoutMs: 10_000, perHost: 2, retryDelayMs: 60_000 }, warnings: [] },
    ],
    [
      'a proxy password on the command line is warned about',
      ['-', '--engine', 'local', '--smtp', '--smtp-proxy', 'socks5://ann:pw@127.0.0.1:1080'],
      {},
      {
        smtp: { proxy: { host: '127.0.0.1', port: 1080 } },
        warnings: [expect.stringMatching(/^warning: --smtp-proxy holds a password.*MAILSIFT_SMTP_PROXY instead$/)],
      },
    ],
    [
      '…and not when it comes from the environment',
      ['-', '--engine', 'local', '--smtp'],
      { MAILSIFT_SMTP_PROXY: 'socks5://ann:pw@127.0.0.1:1080' },
      { smtp: { proxy: { host: '127.0.0.1', port: 1080 } }, warnings: [] },
    ],
  ];
  it.each(cases)('%s', async (_name, argv, env, expected) => {
    expect(planOf(await planValidate(argv, context(env)))).toMatchObject(expected);
  });

  it('writes UTF-8 without a BOM to a terminal, whatever the input (its delimiter and line ends kept); a flag still wins', async () => {
    const tty = context({}, { stdoutIsTTY: true });
    expect(planOf(await planValidate(['in.csv'], tty)).output.dialect).toEqual({ encoding: 'utf-8', bom: false });
    expect(planOf(await planValidate(['in.csv', '--output-encoding', 'utf-16le', '--bom'], tty)).output.dialect).toEqual({ encoding: 'utf-16le', bom: true });
    expect(planOf(await planValidate(['in.csv', '-o', 'out.csv'], tty)).output.dialect).toEqual({});
  });

  it('--help shows the short help instead of planning a run; --help all the whole reference', async () => {
    const planned = await planValidate(['--help'], context());
    if (!('shown' in planned)) throw new Error('expected help');
    expect(planned.shown).toMatch(/^Usage: validate \[options\] \[input\]/);
    expect(planned.shown).toContain('All flags, columns, exit codes: mailsift validate --help all, or docs/cli.md');
    const whole = await planValidate(['--help', 'all'], context());
    if (!('shown' in whole)) throw new Error('expected help');
    for (const text of [
      'Usage: validate',
      'Exit status:',
      '  4    finished, but some rows carry an error',
      'metrics: valid, invalid, risky, unknown, errors, duplicates, prechecked',
      'Output columns',
      'status, reason, is_valid, confidence',
      'MAILSIFT_API_KEY',
      'MAILSIFT_BASE_URL',
      'HTTPS_PROXY',
    ]) {
      expect(whole.shown).toContain(text);
    }
  });
});

describe('check', () => {
  const errors: [string[], RegExp][] = [
    [[], /^missing required argument 'email'$/],
    [['--dns-server', 'dns.example', 'a@b.test'], /^option '--dns-server <host\[:port\]>' argument 'dns\.example' is invalid\. expected an IP address/],
    [['--engine', 'smtp', 'a@b.test'], /--engine <engine>' argument 'smtp' is invalid/],
    [['--dns-timeout', '0', 'a@b.test'], /^option '--dns-timeout <ms>' argument '0' is invalid\. expected a duration from 1ms to 10m$/],
    [['--timeout', '0', 'a@b.test'], /^option '--timeout <seconds>' argument '0' is invalid\. expected a duration from 1ms to 1h$/],
    [['--retries', '-1', 'a@b.test'], /--retries/],
    [['a@b.test', 'c@d.test'], /too many arguments/],
    [['a@b.test', '--api-key', 'pw-77'], /^--api-key: keys never go in flags .*MAILSIFT_API_KEY.*--api-key-file.*mailsift login/],
    [['ann@ok.test', '--engine', 'local', '--smtp', '--smtp-proxy', 'http://ann:pw-77@127.0.0.1:1'], /^--smtp-proxy wants a socks5:\/\//],
  ];
  it.each(errors)('%j is a usage error', async (argv, message) => {
    const text = errorOf(await planCheck(argv, context()));
    expect(text).toMatch(message);
    expect(text).not.toContain('pw-77');
  });

  it.each([
    [['--json', ' a@b.test '], {}, { email: 'a@b.test', engine: { engine: 'local', notice: expect.stringMatching(/offline engine/) }, json: true }],
    [
      ['a@b.test', '--engine', 'local', '--dns-server', '127.0.0.1:5353'],
      {},
      { engine: { engine: 'local' }, engineSettings: { dnsServer: '127.0.0.1:5353', dnsTimeoutMs: 2000 }, json: false },
    ],
    [['a@b.test'], API, { engine: { engine: 'api', baseUrl: 'https://api.example.com' } }],
  ] as [string[], Record<string, string>, object][])('%j plans %j', async (argv, env, expected) => {
    expect(planOf(await planCheck(argv, context(env)))).toMatchObject(expected);
  });
});

describe('serve', () => {
  const errors: [string[], Record<string, string>, RegExp][] = [
    [['--host', '0.0.0.0'], {}, /^refusing plain HTTP on 0\.0\.0\.0: give --tls-cert\/--tls-key, bind a loopback host, or pass --allow-insecure-http$/],
    [['--rate-limit', 'lots'], {}, /^option '--rate-limit <requests\/seconds>' argument 'lots' is invalid\. expected <requests>\/<seconds>, e\.g\. 60\/60$/],
    [['--port', '70000'], {}, /^option '--port <n>' argument '70000' is invalid\. expected a whole number from 0 to 65535$/],
    [['--shape', 'c'], {}, /^option '--shape <a\|b>' argument 'c' is invalid\. expected a or b$/],
    // the same words as validate's and check's: one parser per option
    [
      ['--dns-timeout', 'soon'],
      {},
      /^option '--dns-timeout <ms>' argument 'soon' is invalid\. expected a number of milliseconds from 1ms to 10m, or a number with a unit \(ms, s, m, h\)$/,
    ],
    [
      ['--drain-timeout', '-1'],
      {},
      /^option '--drain-timeout <seconds>' argument '-1' is invalid\. expected a number of seconds from 0 to 1h, or a number with a unit/,
    ],
    [['--tls-cert', 'c.pem'], {}, /^--tls-cert and --tls-key go together: give both or neither$/],
    [['--smtp', '--no-dns'], {}, /^--smtp needs DNS to find mail servers: drop --no-dns$/],
    [['--smtp-lease', '0'], {}, /--smtp-lease <seconds>' argument '0' is invalid\. expected a duration from 500ms to 1h$/],
    [['--smtp-lease', '3601'], {}, /expected a duration from 500ms to 1h$/],
    [['--dns-server', 'dns.example'], {}, /^option '--dns-server <host\[:port\]>' argument 'dns\.example' is invalid\. expected an IP address/],
    [['--redis', 'redis://[::1'], {}, /^--redis: not a URL/],
    [['--redis', 'http://127.0.0.1:6379'], {}, /^--redis: scheme "http" is not redis or rediss/],
    [['--redis', 'redis://127.0.0.1:6379/cache'], {}, /^--redis: the path must be a database number/],
    [[], { MAILSIFT_REDIS_URL: 'http://127.0.0.1:6379' }, /^--redis: scheme "http" is not redis or rediss/],
    [['--redis', 'redis://127.0.0.1', '--redis-prefix', 'a b'], {}, /^--redis-prefix must not hold spaces or control characters$/],
    [
      ['--redis', 'redis://127.0.0.1', '--redis-timeout', '0'],
      {},
      /^option '--redis-timeout <ms>' argument '0' is invalid\. expected a duration from 1ms to 1m$/,
    ],
  ];
  it.each(errors)('%j (env %j) is a usage error', async (argv, env, message) => {
    expect(errorOf(await planServe(argv, context(env)))).toMatch(message);
  });

  it('plans with the defaults: loopback, port 8080, 60 requests a minute, shape a, no Redis', async () => {
    expect(planOf(await planServe([], context()))).toMatchObject({
      settings: {
        host: '127.0.0.1',
        port: 8080,
        rateLimit: { requests: 60, seconds: 60 },
        shape: 'a',
        dns: true,
        dnsTimeoutMs: 2000,
        metrics: false,
        drainTimeoutMs: 10_000,
        redis: undefined,
      },
      warnings: [],
    });
  });

  it('takes MAILSIFT_REDIS_URL from the environment, and --redis over it', async () => {
    const fromEnv = planOf(await planServe([], context({ MAILSIFT_REDIS_URL: 'redis://10.0.0.1:6380/2' })));
    expect(fromEnv.settings.redis?.target).toMatchObject({ shown: 'redis://10.0.0.1:6380/2' });
    const fromFlag = planOf(await planServe(['--redis', 'redis://10.0.0.9'], context({ MAILSIFT_REDIS_URL: 'redis://10.0.0.1:6380/2' })));
    expect(fromFlag.settings.redis?.target).toMatchObject({ shown: 'redis://10.0.0.9' });
  });

  it('plain HTTP on another host when asked; --smtp with its deadline', async () => {
    expect(planOf(await planServe(['--host', '0.0.0.0', '--allow-insecure-http', '--port', '0', '--shape', 'B'], context())).settings).toMatchObject({
      host: '0.0.0.0',
      port: 0,
      shape: 'b',
    });
    expect(planOf(await planServe(['--smtp', '--smtp-deadline', '2.5'], context())).smtp).toMatchObject({ deadlineMs: 2500, perHost: 2 });
  });

  it("decides serve's mailbox-check policy when planned: public addresses only (unless told), pending checks bounded, a host's budget renewed", async () => {
    expect(planOf(await planServe(['--smtp'], context())).smtp).toMatchObject({ publicOnly: true, maxPending: 1000, hostBudgetWindowMs: 600_000 });
    expect(planOf(await planServe(['--smtp', '--smtp-allow-private'], context())).smtp).toMatchObject({ publicOnly: false });
    expect(planOf(await planServe([], context())).smtp).toBeUndefined();
  });
});
