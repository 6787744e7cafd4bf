// A process that takes journal locks on command, for the lock race test:
// `node lock-worker.mjs <lock module>`; reads lines from stdin:
//   "go <path>"  → tries lockFile(path), answers "won" or "lost <message>"
//   "release"    → releases a lock it won, answers "released"
import { createInterface } from 'node:readline';

const { lockFile } = await import(process.argv[2]);
let release;
const say = (line) => process.stdout.write(line + '\n');
for await (const line of createInterface({ input: process.stdin })) {
  if (line.startsWith('go ')) {
    try {
      release = await lockFile(line.slice(3), '--journal');
      say('won');
    } catch (err) {
      say(`lost ${String(err.message).split('\n')[0]}`);
    }
  } else if (line === 'release') {
    await release?.();
    release = undefined;
    say('released');
  }
}
