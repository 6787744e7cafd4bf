// Reads an input the way `mailsift validate` does and counts its rows, nothing
// else: the reader's own time and memory, without the engine or the dedupe
// memo. Exit 2 (and the message) when the input is refused, as the CLI would.
import { openInput } from '../dist/read/open-input.js';

try {
  const input = await openInput({ path: process.argv[2] });
  let rows = 0;
  for await (const chunk of input.rows) rows += chunk.length;
  input.close();
  console.error(`${rows} rows`);
} catch (err) {
  console.error(err.message);
  process.exitCode = err.exitCode ?? 1;
}
