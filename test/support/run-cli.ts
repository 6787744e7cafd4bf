import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/mailsift.js', import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  /** stdout as bytes: a CSV in its input's encoding (UTF-16, Windows-1252) is not UTF-8 text */
  stdoutBytes?: Buffer;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  /** written to stdin, then closed; stdin is closed empty when absent */
  stdin?: string | Buffer;
  cwd?: string;
  /** kill the process after this long (a hung binary must fail the test, not hang it) */
  timeoutMs?: number;
}

/**
 * Spawns the real binary with a clean environment: no API key or base URL
 * leaks in from the developer's shell, and no TTY (progress stays off).
 */
export function runCli(args: string[], options: RunOptions = {}): Promise<CliResult> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', NO_COLOR: '1' };
  for (const [k, v] of Object.entries(options.env ?? {})) if (v !== undefined) env[k] = v;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const stdoutBytes = Buffer.concat(out);
      resolve({ code, signal, stdout: stdoutBytes.toString('utf8'), stdoutBytes, stderr });
    });
    child.stdin.on('error', () => {}); // the binary may exit before reading all of stdin
    child.stdin.end(options.stdin ?? '');
  });
}

/** Parses CSV output produced by mailsift (RFC 4180 quoting; CRLF, LF or CR end a row; `delimiter` as the output's dialect says). */
export function parseCsv(text: string, delimiter = ','): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === delimiter) {
      row.push(cell);
      cell = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += c;
  }
  if (cell !== '' || row.length) {
    row.push(cell);
    rows.push(row);
  }
  return rows;
}
