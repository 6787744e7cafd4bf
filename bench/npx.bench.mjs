// The first `npx mailsift` on a machine that has never seen it (issue 32),
// against a one-package CLI measured the same way:
//
//   1. packs this package (dist/ as `npm run bench` built it) and publishes it
//      to a private registry started for the run: Verdaccio 6.8.0 on loopback,
//      the public registry as its uplink (installed on first use into
//      $XDG_CACHE_HOME/mailsift-bench/, not a devDependency; on Node 20 it
//      needs node-fetch held at 2.7.0);
//   2. warms Verdaccio's own cache (one untimed install of each), so the rounds
//      time the npm client, not the uplink;
//   3. in alternation, mailsift then the anchor: cold `npx -y X --version` (an
//      empty npm cache and an empty HOME each time) and warm (the same again);
//   4. prints the medians, the per-round ratios and their median, the packages
//      installed and their size on disk.
//
// BENCH_ROUNDS (5), BENCH_ANCHOR (npm-check-updates, or prettier),
// BENCH_WITHOUT=exceljs publishes with that dependency left out of package.json
// (to measure the package as another branch will leave it).
// Wall times: npx waits on the disk and the (loopback) network more than it
// computes; say the machine's load beside them.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './lib.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ANCHOR = process.env.BENCH_ANCHOR ?? 'npm-check-updates';
const WITHOUT = (process.env.BENCH_WITHOUT ?? '').split(',').filter(Boolean);
const VERDACCIO = '6.8.0';
const npm = 'npm';

const work = mkdtempSync(join(tmpdir(), 'mailsift-npx-bench-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

const verdaccioBin = installVerdaccio();
const port = await freePort();
const registry = `http://127.0.0.1:${port}/`;
const verdaccio = startVerdaccio(verdaccioBin, port);
try {
  await until(async () => (await fetch(`${registry}-/ping`).catch(() => undefined))?.ok === true, 60_000, 'Verdaccio did not start');
  const token = await addUser();
  const npmrc = join(work, 'publish.npmrc');
  writeFileSync(npmrc, `registry=${registry}\n//127.0.0.1:${port}/:_authToken=${token}\n`);
  publishMailsift(npmrc);

  // Verdaccio fetches from the uplink once; what is timed is the client's cold start
  for (const name of ['mailsift', ANCHOR]) npx(name, freshHome());

  const rows = { mailsift: { cold: [], warm: [] }, anchor: { cold: [], warm: [] } };
  const ratios = { cold: [], warm: [] };
  let installed;
  for (let round = 0; round < ROUNDS; round++) {
    const times = {};
    for (const [key, name] of [
      ['mailsift', 'mailsift'],
      ['anchor', ANCHOR],
    ]) {
      const home = freshHome();
      const cold = npx(name, home);
      const warm = npx(name, home);
      rows[key].cold.push(cold);
      rows[key].warm.push(warm);
      times[key] = { cold, warm };
      if (round === 0) installed = { ...installed, [key]: footprint(home) };
    }
    ratios.cold.push(times.mailsift.cold / times.anchor.cold);
    ratios.warm.push(times.mailsift.warm / times.anchor.warm);
    console.log(
      `round ${round + 1}: cold ${s(times.mailsift.cold)} vs ${s(times.anchor.cold)}, warm ${s(times.mailsift.warm)} vs ${s(times.anchor.warm)} (load ${loadavg()[0].toFixed(1)})`,
    );
  }
  console.log(`\nnpx -y X --version, median of ${ROUNDS}, Verdaccio ${VERDACCIO} on loopback, empty npm cache and HOME for each cold run`);
  console.log(`| | mailsift${WITHOUT.length ? ` (without ${WITHOUT.join(', ')})` : ''} | ${ANCHOR} | ratio (median per round; best against best) |`);
  console.log('|---|---|---|---|');
  for (const kind of ['cold', 'warm']) {
    const m = rows.mailsift[kind];
    const a = rows.anchor[kind];
    console.log(
      `| ${kind} | ${s(median(m))} | ${s(median(a))} | ${median(ratios[kind]).toFixed(2)} (per round ${ratios[kind].map((r) => r.toFixed(2)).join(', ')}; best ${(Math.min(...m) / Math.min(...a)).toFixed(2)}) |`,
    );
  }
  for (const key of ['mailsift', 'anchor']) {
    const f = installed[key];
    console.log(`| installed, ${key === 'anchor' ? ANCHOR : 'mailsift'} | ${f.packages} packages, ${(f.bytes / 2 ** 20).toFixed(1)} MiB, ${f.files} files |`);
  }
  console.log(
    `load average at the end: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
} finally {
  verdaccio.kill('SIGTERM');
}

function installVerdaccio() {
  const dir = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'mailsift-bench', `verdaccio-${VERDACCIO}`);
  const bin = join(dir, 'node_modules', '.bin', 'verdaccio');
  if (existsSync(bin)) return bin;
  console.log(`installing Verdaccio ${VERDACCIO} into ${dir} (once)`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'mailsift-bench-verdaccio', private: true, dependencies: { verdaccio: VERDACCIO }, overrides: { 'node-fetch': '2.7.0' } }),
  );
  execFileSync(npm, ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, stdio: 'inherit' });
  return bin;
}

function startVerdaccio(bin, port) {
  const storage = join(work, 'storage');
  const config = join(work, 'verdaccio.yaml');
  writeFileSync(
    config,
    [
      `storage: ${storage}`,
      'auth:',
      '  htpasswd:',
      `    file: ${join(work, 'htpasswd')}`,
      'uplinks:',
      '  npmjs:',
      '    url: https://registry.npmjs.org/',
      'packages:',
      // ours is never looked up upstream: a public package of the same name must not mix in
      "  'mailsift':",
      '    access: $all',
      '    publish: $authenticated',
      "  '**':",
      '    access: $all',
      '    publish: $authenticated',
      '    proxy: npmjs',
      'log: { type: stdout, format: pretty, level: error }',
      'server: { keepAliveTimeout: 60 }',
      '',
    ].join('\n'),
  );
  const child = spawn(process.execPath, [bin, '--config', config, '--listen', `127.0.0.1:${port}`], { stdio: ['ignore', 'ignore', 'inherit'] });
  child.on('exit', (code, signal) => {
    if (signal !== 'SIGTERM') console.error(`Verdaccio exited (${code ?? signal})`);
  });
  return child;
}

async function addUser() {
  const r = await fetch(`${registry}-/user/org.couchdb.user:bench`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench', password: 'bench-password', type: 'user', roles: [], date: new Date().toISOString() }),
  });
  const body = await r.json();
  if (!body.token) throw new Error(`could not add a user to Verdaccio: ${JSON.stringify(body)}`);
  return body.token;
}

/** npm pack (dist/ as built), optionally without some dependencies, then publish to Verdaccio. */
function publishMailsift(npmrc) {
  const packed = join(work, 'packed');
  mkdirSync(packed);
  const tarball = execFileSync(npm, ['pack', '--silent', '--ignore-scripts', '--pack-destination', packed], { cwd: ROOT, encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop();
  execFileSync('tar', ['xzf', join(packed, tarball), '-C', packed]);
  const dir = join(packed, 'package');
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  for (const name of WITHOUT) delete pkg.dependencies?.[name];
  writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg, null, 2));
  execFileSync(npm, ['publish', '--ignore-scripts', '--loglevel=error', '--userconfig', npmrc, '--registry', registry, dir], {
    cwd: work,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  console.log(`published ${pkg.name}@${pkg.version} (${tarball}, dependencies: ${Object.keys(pkg.dependencies ?? {}).join(', ') || 'none'}) to ${registry}`);
}

function freshHome() {
  return mkdtempSync(join(work, 'home-'));
}

/** Wall milliseconds of `npx -y name --version` in an empty directory, HOME and npm cache under `home`. */
function npx(name, home) {
  const cwd = join(home, 'cwd');
  mkdirSync(cwd, { recursive: true });
  // a clean environment: nothing of `npm run`'s own npm_config_* may leak in
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    npm_config_cache: join(home, '.npm'),
    npm_config_registry: registry,
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  };
  const started = process.hrtime.bigint();
  const r = spawnSync('npx', ['-y', name, '--version'], { cwd, env, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (r.status !== 0) throw new Error(`npx ${name} failed (${r.status}): ${r.stderr}`);
  return ms;
}

/** The packages npx installed under `home` and their size on disk. */
function footprint(home) {
  const npxDir = join(home, '.npm', '_npx');
  const [hash] = readdirSync(npxDir);
  const modules = join(npxDir, hash, 'node_modules');
  let packages = 0;
  for (const e of readdirSync(modules)) {
    if (e.startsWith('.')) continue;
    if (e.startsWith('@')) packages += readdirSync(join(modules, e)).length;
    else packages++;
  }
  const walk = (dir) => {
    let bytes = 0;
    let files = 0;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) {
        const w = walk(p);
        bytes += w.bytes;
        files += w.files;
      } else if (e.isFile()) {
        // on disk: whole blocks, as du counts
        bytes += statSync(p).blocks * 512;
        files++;
      }
    }
    return { bytes, files };
  };
  return { packages, ...walk(modules) };
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

async function until(check, ms, message) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(message);
}

function median(xs) {
  const v = [...xs].sort((a, b) => a - b);
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
}

function s(ms) {
  return `${(ms / 1000).toFixed(2)} s`;
}
