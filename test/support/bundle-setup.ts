/**
 * Global set-up of the suite: bundles src/ into dist/ (scripts/bundle.mjs,
 * about a second) before any test spawns bin/mailsift.js, so the tests run the
 * package as users get it and built from src/ as it is now, even after a bare
 * `npx tsc`. (tsc's own dist/ modules, which a few tests import, still need tsc.)
 */
export default async function setup(): Promise<void> {
  // @ts-expect-error: a plain .mjs script without types
  const { bundle } = (await import('../../scripts/bundle.mjs')) as { bundle: () => Promise<unknown> };
  await bundle();
}
