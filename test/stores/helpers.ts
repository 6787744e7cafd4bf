import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { BIN, type CliResult } from '../support/run-cli.js';
import { waitFor } from '../support/wait.js';
import type { FaultServer } from '../support/fault-server.js';
import type { Verdict } from '../../src/verdict.js';

/** interruption moments are random but reproducible from a seed */
export { seeded } from '../support/fault-server.js';

export const API_KEY = 'journal-test-key-5f1c9e';

export function apiEnv(server: FaultServer): Record<string, string> {
  // The key reaches the binary only through the environment, never argv.
  return { PATH: process.env.PATH ?? '', NO_COLOR: '1', MAILSIFT_API_KEY: API_KEY, MAILSIFT_BASE_URL: server.url };
}

export interface Interrupted extends CliResult {
  /** false when the run ended before the moment came (the test should then fail) */
  signalled: boolean;
}

/**
 * Spawns the binary and sends `sig` once `when()` holds (polled, bounded), plus
 * `extraMs` so the signal lands at varied phases of a request.
 */
export function runAndSignal(
  args: string[],
  env: Record<string, string>,
  when: () => boolean,
  sig: NodeJS.Signals,
  extraMs: number,
  cwd: string,
): Promise<Interrupted> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let signalled = false;
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const deadline = setTimeout(() => child.kill('SIGKILL'), 30_000);
    let closed = false;
    // the moment: `when`, then extraMs; a run that ends first is not signalled
    void waitFor(() => closed || when(), { what: 'the moment to signal the run', timeoutMs: 15_000, intervalMs: 5 }).then(
      () =>
        setTimeout(() => {
          signalled = child.exitCode === null && child.signalCode === null;
          if (signalled) child.kill(sig);
        }, extraMs),
      () => undefined, // never came: the run goes on unsignalled, and `signalled` says so
    );
    child.on('error', reject);
    child.on('close', (code, signal) => {
      closed = true;
      clearTimeout(deadline);
      resolve({ code, signal, stdout, stderr, signalled });
    });
  });
}

/** Every address the server was asked about, in order of requests, from request `from` on. */
export function sentEmails(server: FaultServer, from = 0): string[] {
  return server.requests.slice(from).flatMap((r) => r.emails);
}

export function countDuplicates(emails: string[]): string[] {
  const seen = new Set<string>();
  const twice: string[] = [];
  for (const e of emails) {
    if (seen.has(e)) twice.push(e);
    seen.add(e);
  }
  return twice;
}

export interface JournalCheck {
  header: Record<string, unknown>;
  emails: string[];
  /** bytes after the last newline (only a SIGKILL may leave some) */
  tornTail: number;
}

/** Reads a journal strictly: every complete line must parse; only the tail may be torn. */
export async function readJournal(path: string): Promise<JournalCheck> {
  const text = await readFile(path, 'utf8');
  const end = text.lastIndexOf('\n') + 1;
  const lines = text.slice(0, end).split('\n').slice(0, -1);
  const header = JSON.parse(lines[0]!) as Record<string, unknown>;
  const emails = lines.slice(1).map((l) => {
    const entry = JSON.parse(l) as unknown[];
    if (!Array.isArray(entry) || typeof entry[0] !== 'string') throw new Error(`bad journal line ${l}`);
    return entry[0];
  });
  return { header, emails, tornTail: text.length - end };
}

/**
 * After a SIGKILL: every request the fault server has recorded carries its
 * addresses (it records them as it reads the body, so this holds at once
 * today; the wait keeps the count honest if recording ever moves later).
 */
export async function settled(server: FaultServer): Promise<void> {
  await waitFor(() => !server.requests.some((r) => r.emails.length === 0), { what: 'the requests in flight at the kill to be recorded with their addresses' });
}

/** a verdict the test server would never give (risky, 0.42, provider `cached`): reuse shows in the output */
export const cachedVerdict = (email: string): Verdict => ({
  email,
  isValid: true,
  status: 'risky',
  confidence: 0.42,
  provider: 'cached',
  details: { syntax: true, domain: email.slice(email.indexOf('@') + 1), mx: true, disposable: false, role: false },
});
