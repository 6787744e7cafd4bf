// The library page's example (docs/library.md), run as it stands, importing the
// package by its name (Node resolves a package's own name through `exports`).
// The TypeScript consumer (consumer.ts) is compiled against the published
// types by `npm run typecheck` (CI), after the build that writes them.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('use as a library', () => {
  it('runs the example of docs/library.md by the package name', () => {
    const page = readFileSync(`${root}docs/library.md`, 'utf8');
    const code = /```js\n([\s\S]*?)```/.exec(page)?.[1];
    expect(code).toContain("from 'mailsift'");
    // stdin code is a module of the working directory: inside the package, so its own name resolves
    const r = spawnSync(process.execPath, ['--input-type=module'], { cwd: root, input: code, encoding: 'utf8', timeout: 20_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(
      [
        'jane@example.com valid',
        'not-an-address invalid',
        'JANE@example.com valid',
        'first row: Jane Doe valid',
        '20 rows',
        'risky@mailinator.com risky via the API',
        '1 request',
        '',
      ].join('\n'),
    );
  });

  it('a consumer that stops early stops the run', async () => {
    const { validate, createLocalValidator } = await import('../../src/index.js');
    const engine = createLocalValidator({ dns: false });
    let pulled = 0;
    function* endless(): Generator<string> {
      for (;;) {
        pulled++;
        yield `u${pulled}@example.com`;
      }
    }
    const seen: string[] = [];
    for await (const v of validate(endless(), { validator: engine, batchSize: 10 })) {
      seen.push(v.email);
      if (seen.length === 25) break;
    }
    await engine.close();
    expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => `u${i + 1}@example.com`));
    expect(pulled).toBeLessThan(100_000); // bounded read-ahead, not the whole (endless) input
  });
});
