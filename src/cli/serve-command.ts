import { Command } from 'commander';
import { EXIT, UsageError } from '../errors.js';
import type { ServeFlags } from '../serve/config.js';

const say = (line: string): void => {
  process.stderr.write(`mailsift serve: ${line}\n`);
};

export function serveCommand(): Command {
  return new Command('serve')
    .description('serve the validation API (POST /api/validate, /api/validate/bulk) from the offline engine')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--port <n>', 'port to listen on; 0 picks a free one', '8080')
    .option('--keys-file <file>', 'accepted API keys, one per line (default: one random key, printed once on stderr)')
    .option('--rate-limit <requests/seconds>', 'per-key fixed window', '60/60')
    .option('--shape <a|b>', 'response shape of the spec: a (flat) or b (wrapped in data)', 'a')
    .option('--tls-cert <file>', 'PEM certificate: serve HTTPS')
    .option('--tls-key <file>', 'PEM private key for --tls-cert')
    .option('--allow-insecure-http', 'allow plain HTTP on a non-loopback host')
    .option('--no-dns', 'skip DNS lookups (mx left unknown): sandboxes and benchmarks')
    .option('--dns-server <host[:port]>', 'resolver for the engine (default: system resolver)')
    .option('--dns-timeout <ms>', 'per DNS query', '2000')
    .addHelpText(
      'before',
      '\nExamples:\n  $ mailsift serve --no-dns --port 8080\n  $ mailsift keys create --keys-file keys.txt && mailsift serve --keys-file keys.txt --rate-limit 600/60\n',
    )
    .action(async (flags: ServeFlags) => {
      // loaded when serving, not whenever the CLI starts
      const [{ loadServeConfig }, { startServer }, { createLocalValidator }] = await Promise.all([
        import('../serve/config.js'),
        import('../serve/server.js'),
        import('../validate/local/index.js'),
      ]);
      const config = await loadServeConfig(flags);
      const engine = createLocalValidator({
        dns: config.dns,
        dnsServer: config.dnsServer,
        dnsTimeoutMs: config.dnsTimeoutMs,
        onWarning: say,
      });
      const server = await startServer({ ...config, engine, onLog: say }).catch(async (err: unknown) => {
        await engine.close();
        throw listenError(err, config);
      });
      // The key line comes first: whoever waits for "listening on" then has both.
      if (config.generatedKey) say(`no --keys-file; API key for this run: ${config.generatedKey}`);
      say(`listening on ${server.url}`);
      const { requests, seconds } = config.rateLimit;
      say(`rate limit ${requests} ${requests === 1 ? 'request' : 'requests'} per ${seconds} s per key (--rate-limit); response shape ${config.shape}`);
      // Ready to paste into the shell that runs mailsift validate (a wildcard address is reached on loopback).
      process.stderr.write(`export MAILSIFT_BASE_URL=${server.url.replace('//0.0.0.0:', '//127.0.0.1:').replace('//[::]:', '//[::1]:')}\n`);
      say(config.generatedKey ? 'and MAILSIFT_API_KEY=<the key above>' : `and MAILSIFT_API_KEY=<a key from ${flags.keysFile}>`);
      await untilSignalled(async () => {
        say('shutting down: finishing requests in flight');
        await server.close();
        await engine.close();
      });
    });
}

/** Bad TLS material or a port we cannot have is the user's to fix: a one-line usage error. */
function listenError(err: unknown, config: { host: string; port: number; tls?: unknown }): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
    return new UsageError(`cannot listen on ${config.host}:${config.port} (${code})`, { cause: err });
  }
  if (config.tls && /PEM|certificate|key|asn1|ssl/i.test(`${code ?? ''} ${(err as Error).message}`)) {
    return new UsageError(`--tls-cert/--tls-key: not a usable PEM certificate and key (${(err as Error).message})`, { cause: err });
  }
  return err;
}

/**
 * Resolves once a SIGINT/SIGTERM has run `shutdown`. A second signal skips the
 * drain; our listeners replace node's default exit, so we must exit ourselves.
 */
function untilSignalled(shutdown: () => Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals): void => {
      if (stopping) {
        say('second signal: exiting without waiting');
        process.exit(signal === 'SIGINT' ? EXIT.sigint : EXIT.sigterm);
      }
      stopping = true;
      shutdown().then(() => {
        process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
        resolve();
      }, reject);
    };
    process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
  });
}
