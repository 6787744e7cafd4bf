#!/usr/bin/env node
// `mailsift --version` needs nothing but the version: it is answered before the
// command line (commander, every command's options) is loaded, which is most of
// its start-up (npm run bench startup measures it against `node -e 0`).
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const { readFileSync } = await import('node:fs');
  process.stdout.write(`${JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version}\n`);
} else {
  // dist/mailsift-cli.js is the bundle `npm run build` makes (scripts/bundle.mjs)
  const { main } = await import('../dist/mailsift-cli.js');
  main(process.argv);
}
