#!/usr/bin/env node
// `mailsift --version` needs nothing but the version: it is answered before the
// command line (commander, every command's options) is loaded, which is most of
// its start-up (npm run bench startup measures it against `node -e 0`).
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const { readFileSync } = await import('node:fs');
  process.stdout.write(`${JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version}\n`);
} else {
  // This file is the only place that maps a run to the process: main returns the exit code
  // (and takes the process as its io); the process's own streams and signals are set up here.
  // A reader that goes away (`mailsift --help | head`) ends us quietly, not with a stack trace;
  // another write error (a full disk) fails the run, even one that thought it went well, and
  // the output sink, which watches stdout itself, says what could not be written.
  process.stdout.on('error', (err) => {
    if (err.code !== 'EPIPE') process.exitCode = 1;
  });
  // After a hang-up (SIGHUP: the terminal or SSH session closed) writing to the terminal
  // fails with EIO: that must not end, unflushed, a run that handles the hang-up as it
  // handles SIGTERM. There is nowhere left to say it anyway.
  process.stderr.on('error', () => {});
  // Node's answer to SIGUSR1 is to open its inspector on 127.0.0.1:9229: any local process
  // could then read the API key out of this one. A listener replaces that answer; the signal
  // is ignored (a debugger is attached with `node --inspect bin/mailsift.js …` on purpose instead).
  process.on('SIGUSR1', () => {});
  // dist/mailsift-cli.js is the bundle `npm run build` makes (scripts/bundle.mjs)
  const { main, processIo } = await import('../dist/mailsift-cli.js');
  const code = await main(process.argv, processIo());
  // the run's own code (74 for stdout on a full disk) is the more precise; but a failed
  // write to stdout (above) is not undone by a run that thought it went well. Set, not
  // exited with: piped output is never cut off.
  if (code !== 0 || !process.exitCode) process.exitCode = code;
}
