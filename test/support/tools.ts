import { it } from 'vitest';

/**
 * The programs from outside npm that some suites drive: redis-server, Postfix,
 * Chromium, LibreOffice, Gnumeric, tmux, openssl, faketime, jq, python3's
 * openpyxl and xlsxwriter, and root itself (mounts, port 25, a second user).
 * `.ci/run` installs them. Where one is missing, the suite that needs it is
 * skipped with a notice on a developer's machine, but under CI=true it fails:
 * CI must never pass by not running a suite.
 */
export const IN_CI = /^(true|1)$/i.test(process.env.CI ?? '');

const said = new Set<string>();
function notice(line: string): void {
  if (said.has(line)) return;
  said.add(line);
  console.warn(`SKIPPED: ${line}`);
}

const failure = (tool: string, problem: string): Error =>
  new Error(`${tool} is needed and missing: ${problem} (CI=true: a suite that needs it must run, not be skipped; .ci/run installs it)`);

/**
 * For `describe.skipIf()` / `it.skipIf()`, called where the suite is declared:
 * whether to skip for want of `tool`; `problem` says what is missing, or is
 * falsy when nothing is. Under CI=true a failing test naming the problem is
 * declared in the suite's place.
 */
export function missingTool(tool: string, problem: string | false | null | undefined): boolean {
  if (!problem) return false;
  if (IN_CI) {
    it(`needs ${tool}`, () => {
      throw failure(tool, problem);
    });
  } else {
    notice(`${tool}: ${problem}`);
  }
  return true;
}

/**
 * The same rule inside a test that finds out late: under CI=true it throws;
 * elsewhere it says so and skips the test (through `ctx.skip()` when given;
 * without it, the caller returns when this is true).
 */
export function missingToolNow(ctx: { skip(note?: string): void } | undefined, tool: string, problem: string | false | null | undefined): boolean {
  if (!problem) return false;
  if (IN_CI) throw failure(tool, problem);
  notice(`${tool}: ${problem}`);
  ctx?.skip(`${tool}: ${problem}`);
  return true;
}
