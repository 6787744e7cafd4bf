// Shared by the benchmarks: loopback servers in their own process, timed child
// runs with peak RSS, generated inputs.
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const OUT = join(ROOT, 'bench', 'out');
export const BIN = join(ROOT, 'bin', 'mailsift.js');
mkdirSync(OUT, { recursive: true });

/** Starts a node script that prints {"url": ...} on its first stdout line. */
export function startServerProcess(script, args = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let buf = '';
    child.stdout.setEncoding('utf8').on('data', (d) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl >= 0 && !child.url) {
        child.url = JSON.parse(buf.slice(0, nl)).url;
        resolve({
          url: child.url,
          pid: child.pid,
          stop: () =>
            new Promise((r) => {
              child.once('exit', r);
              child.kill('SIGTERM');
            }),
        });
      }
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (!child.url) reject(new Error(`server exited ${code}`));
    });
  });
}

/**
 * Runs a command to completion: wall time, peak RSS (VmHWM) and CPU time (user +
 * system), both polled from /proc — CPU time still means something when other
 * work shares the machine and wall time does not. `mainCpuMs`: the CPU time of
 * the process's main thread alone, what bounds its wall time; the rest is the
 * threads beside it (V8's compiler and collector helpers, libuv's file I/O).
 * `startedAt` and `endedAt`: the epoch ms of the spawn and of the exit.
 */
export function timed(cmd, args, env = {}) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const startedAt = Date.now();
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
    let stderr = '';
    let peakKb = 0;
    let cpuTicks = 0;
    let mainTicks = 0;
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    const poll = setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (m) peakKb = Math.max(peakKb, Number(m[1]));
        cpuTicks = cpuTicksOf(child.pid);
        mainTicks = cpuTicksOf(child.pid, child.pid);
      } catch {}
    }, 20);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearInterval(poll);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      resolve({ code, ms, peakMb: peakKb / 1024, cpuMs: cpuTicks * 10, mainCpuMs: mainTicks * 10, startedAt, endedAt: Date.now(), stderr });
    });
  });
}

/** utime + stime of a process (or of its thread `tid`), in clock ticks (1/100 s on Linux); throws once it is gone. */
export function cpuTicksOf(pid, tid) {
  const stat = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}

/** A file of `n` distinct generated addresses, one per line (cached across runs). */
export async function addressFile(n, name = `addresses-${n}.txt`) {
  const path = join(OUT, name);
  if (existsSync(path)) return path;
  const out = createWriteStream(path);
  for (let i = 0; i < n; i++) {
    if (!out.write(`user${i}.${(i * 2654435761) % 100000}@domain${i % 10000}.example.com\n`)) {
      await new Promise((r) => out.once('drain', r));
    }
  }
  await new Promise((r) => out.end(r));
  return path;
}

export const ratio = (a, b) => (a / b).toFixed(2);

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * A loopback address per simulated mail server: 127.0.1.1, 127.0.1.2, ...
 * (Linux routes all of 127/8 to lo). The mailbox check keeps its politeness
 * per server address, so servers that shared 127.0.0.1 would be one server.
 */
export const loopback = (i) => `127.0.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`;

/** Listens with `onConnection` on each of `hosts`, one port for all; resolves to the servers and the port. */
export async function listenOnEach(hosts, onConnection, tries = 10) {
  const servers = [];
  const listen = (host, port) =>
    new Promise((resolve, reject) => {
      const s = createServer(onConnection);
      s.maxConnections = 100_000;
      s.once('error', reject);
      s.listen(port, host, () => {
        servers.push(s);
        resolve(s.address().port);
      });
    });
  try {
    const port = await listen(hosts[0], 0);
    for (const h of hosts.slice(1)) await listen(h, port);
    return { servers, port };
  } catch (err) {
    for (const s of servers) s.close();
    // the port was taken on another address: try another
    if (err.code === 'EADDRINUSE' && tries > 1) return listenOnEach(hosts, onConnection, tries - 1);
    throw err;
  }
}
