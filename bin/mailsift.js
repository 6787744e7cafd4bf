#!/usr/bin/env node
import v8 from 'node:v8';

// A bulk run allocates fast but keeps little alive (the batches in flight).
// V8 would then grow its old generation with the allocation rate, and the
// process's memory with the input's size; a small growing factor keeps the
// heap near what is live, so memory stays flat as the input grows.
v8.setFlagsFromString('--heap-growing-percent=100');

// dist/mailsift-cli.js is the bundle `npm run build` makes (scripts/bundle.mjs)
const { main } = await import('../dist/mailsift-cli.js');
main(process.argv);
