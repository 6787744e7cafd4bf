#!/usr/bin/env node
// The package as users install it: src/ and its dependencies bundled by esbuild
// into dist/ beside tsc's output (which keeps the library's .d.ts files), as
// npm-check-updates and prettier ship. `npx mailsift` then installs one package
// instead of dozens (issue 32: bench/npx.bench.mjs measures it).
//
//   dist/mailsift-cli.js   the command line (bin/mailsift.js runs it)
//   dist/mailsift.js       the library (package.json "exports")
//   dist/chunk-*.js        code both share, and what a command loads when it runs
//                          (the API engine, serve, Redis, SMTP, the report, xlsx)
//   dist/THIRD-PARTY-LICENSES.txt  the licence of every package bundled in
//
// Run by `npm run build` (after tsc) and by the e2e tests' global set-up, so
// the tests that spawn bin/mailsift.js run what users run, built from src/ as it is.
import { readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');

/**
 * Left to npm: disposable-email-domains is data read at run time and updated
 * often (users get its updates within the range).
 */
const EXTERNAL = ['disposable-email-domains'];

export async function bundle() {
  // chunk names carry a hash: drop the last build's, or they pile up in the package
  if (existsSync(dist)) {
    for (const f of readdirSync(dist)) if (/^(chunk-.*|mailsift(-cli)?)\.js(\.map)?$/.test(f)) rmSync(join(dist, f));
  }
  const result = await build({
    absWorkingDir: root,
    entryPoints: { 'mailsift-cli': 'src/cli/main.ts', mailsift: 'src/index.ts' },
    outdir: 'dist',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20.18',
    // maps for stack traces (node --enable-source-maps); the sources themselves stay out of the package
    sourcemap: true,
    sourcesContent: false,
    metafile: true,
    external: EXTERNAL,
    // chunks sit beside the entries: src/version.ts reads ../package.json from where it runs
    chunkNames: 'chunk-[hash]',
    legalComments: 'none',
    logLevel: 'warning',
    // the CommonJS packages bundled in (commander, ioredis, ...) call require() for node's own modules
    banner: { js: "import { createRequire as __mailsiftRequire } from 'node:module';\nconst require = __mailsiftRequire(import.meta.url);" },
  });
  writeFileSync(join(dist, 'THIRD-PARTY-LICENSES.txt'), licences(Object.keys(result.metafile.inputs)));
  return result;
}

/** The licence text of each package whose code went into the bundle, found beside its package.json. */
function licences(inputs) {
  const packages = new Map();
  for (const input of inputs) {
    const m = /^(.*node_modules\/((?:@[^/]+\/)?[^/]+))\//.exec(input);
    if (m && !packages.has(m[2])) packages.set(m[2], join(root, m[1]));
  }
  const parts = [
    'mailsift bundles the following packages into dist/. Their licences follow.',
    'mailsift itself: see LICENSE. The free-mail domain list (src/engines/local/free-domains.ts) is from freemail, ISC, noted in that file.',
  ];
  for (const [name, dir] of [...packages].sort(([a], [b]) => a.localeCompare(b))) {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const file = readdirSync(dir).find((f) => /^(licen[cs]e|copying)(\.|$)/i.test(f));
    const text = file ? readFileSync(join(dir, file), 'utf8').trim() : `(no licence file in the package; package.json says: ${pkg.license ?? 'nothing'})`;
    parts.push(`${'='.repeat(72)}\n${name}@${pkg.version} (${pkg.license ?? 'see below'})\n${'='.repeat(72)}\n${text}`);
  }
  return parts.join('\n\n') + '\n';
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await bundle();
