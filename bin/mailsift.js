#!/usr/bin/env node
// dist/mailsift-cli.js is the bundle `npm run build` makes (scripts/bundle.mjs)
const { main } = await import('../dist/mailsift-cli.js');
main(process.argv);
