import { createWriteStream, existsSync, promises as fs } from 'node:fs';
import type { Writable } from 'node:stream';
import { MailsiftError, UsageError } from '../errors.js';
import { validateStream, type RunResult } from '../pipeline/validate-stream.js';
import { newProgress } from '../progress.js';
import { openInput } from '../read/open-input.js';
import type { Validator } from '../validate/validator.js';
import type { Status } from '../verdict.js';
import { createRowWriter } from '../write/row-writer.js';
import { Sink } from '../write/sink.js';
import { SummaryFile } from '../write/summary-file.js';
import { resolveEngine } from './api-config.js';
import { formatFromPath } from './parse-flags.js';
import { runDryRun } from './run-dry-run.js';
import type { FailOnRule } from '../terminal/fail-on.js';
import { RunReporter } from '../terminal/run-reporter.js';
import { openStores } from '../journal/open-stores.js';
import { interruptedAdvice, watchInterrupts, INTERRUPT_GRACE_MS } from './interrupt.js';

export interface ValidateFlags {
  column?: string;
  output?: string;
  format?: 'csv' | 'json' | 'ndjson';
  only?: Set<Status>;
  summary?: string;
  batchSize: number;
  concurrency: number;
  retries: number;
  timeout: number;
  baseUrl?: string;
  apiKeyFile?: string;
  engine?: 'api' | 'local';
  dnsServer?: string;
  dnsTimeout: number;
  quiet?: boolean;
  /** commander's --no-progress / --no-color */
  progress?: boolean;
  color?: boolean;
  dryRun?: boolean;
  failOn?: FailOnRule[];
  journal?: string;
  cache?: string;
  cacheTtl?: string;
}

const say = (line: string): void => {
  process.stderr.write(`mailsift: ${line}\n`);
};

/** `mailsift validate`: maps flags to the pipeline, and its result to an exit code. */
export async function runValidate(inputArg: string | undefined, flags: ValidateFlags): Promise<void> {
  const choice = resolveEngine(flags);
  const inputPath = inputArg ?? (process.stdin.isTTY ? undefined : '-');
  if (inputPath === undefined) {
    throw new UsageError('no input: give a file (mailsift validate contacts.csv) or pipe addresses on stdin');
  }
  // Read the input's shape before anything is created or printed: a bad input
  // leaves no half-written output behind.
  const input = await openInput({ path: inputPath, column: flags.column });
  const job = { engine: choice.engine, baseUrl: choice.engine === 'api' ? choice.baseUrl : undefined, dnsServer: flags.dnsServer };
  const runFiles = { input: inputPath, output: flags.output, summary: flags.summary };
  if (flags.dryRun) {
    // A dry run creates no file: only a journal or cache that exists can tell what is already known.
    const { known } = await openStores({ ...flags, journal: existing(flags.journal), cache: existing(flags.cache) }, job, runFiles);
    try {
      return await runDryRun(input, choice.engine, flags, known);
    } finally {
      await known?.close();
    }
  }

  const { known } = await openStores(flags, job, runFiles);
  let out: Writable;
  let summaryFile: SummaryFile | undefined;
  try {
    // Every output is proven writable before the first request.
    summaryFile = flags.summary ? await SummaryFile.open(flags.summary) : undefined;
    out = flags.output && flags.output !== '-' ? await openOutput(flags.output) : process.stdout;
  } catch (err) {
    await summaryFile?.discard();
    await known?.close(); // else the journal's lock file outlives us
    throw err;
  }
  if (choice.engine === 'local' && choice.notice && !flags.quiet) say(choice.notice);
  // Created before the validator: the API client reports rate-limit pauses in it.
  const progress = newProgress();
  // Ctrl-C must also hold back requests the API client has queued (linked to watchInterrupts below).
  const stopSending = new AbortController();
  const validator: Validator =
    choice.engine === 'api'
      ? // loaded only when used: undici alone is a tenth of a second of start-up
        (await import('../validate/api/client.js')).createApiValidator({
          baseUrl: choice.baseUrl,
          apiKey: choice.apiKey,
          timeoutMs: flags.timeout * 1000,
          retries: flags.retries,
          concurrency: flags.concurrency,
          progress,
          stop: stopSending.signal,
        })
      : // loaded only when used: its lists cost start-up time an API run need not pay
        (await import('../validate/local/index.js')).createLocalValidator({
          dnsServer: flags.dnsServer,
          dnsTimeoutMs: flags.dnsTimeout,
          // --quiet keeps stderr for errors; warnings stay in the --summary JSON.
          onWarning: (line) => {
            if (!flags.quiet) say(line);
          },
        });

  const sink = new Sink(out, out === process.stdout ? 'stdout' : flags.output);
  const format = flags.format ?? formatFromPath(flags.output);
  const reporter = new RunReporter(progress, {
    flags,
    failOn: flags.failOn,
    output: out === process.stdout ? 'stdout' : flags.output!,
    summaryFile: flags.summary,
  });
  await reporter.start();
  const interrupts = watchInterrupts({
    graceMs: INTERRUPT_GRACE_MS,
    notice: (line) => {
      reporter.stop();
      say(line);
    },
  });
  interrupts.stop.addEventListener('abort', () => stopSending.abort(interrupts.stop.reason), { once: true });

  let result: RunResult | undefined;
  let endFailure: unknown;
  try {
    result = await validateStream({
      input,
      validator,
      writer: createRowWriter(format, sink, input.header),
      batchSize: flags.batchSize,
      concurrency: flags.concurrency,
      only: flags.only,
      progress,
      outputGone: () => sink.gone,
      known,
      stop: interrupts.stop,
      cancel: interrupts.abandon,
    });
  } finally {
    input.close();
    reporter.stop();
    await validator.close();
    try {
      await known?.close();
    } finally {
      // A failed write must fail the run (rows would be lost), but not mask an error already on its way.
      endFailure = await sink.end(out !== process.stdout).then(
        () => undefined,
        (err: unknown) => err,
      );
      interrupts.dispose();
      if (result === undefined || endFailure !== undefined || sink.gone) await summaryFile?.discard();
    }
  }
  if (endFailure !== undefined) throw endFailure;
  if (sink.gone) return; // the reader went away (`| head`): end quietly

  const { summary } = result;
  await summaryFile?.write(summary);
  process.exitCode = reporter.finish(summary, result.complete);
  const signalled = interrupts.exitCode();
  if (signalled !== undefined) {
    say(interruptedAdvice(flags.journal, validator.engine));
    process.exitCode = signalled;
  }
}

/** `path` when it names something that exists (or is `-`, refused later), else undefined. */
function existing(path: string | undefined): string | undefined {
  return path !== undefined && (path === '-' || existsSync(path)) ? path : undefined;
}

async function openOutput(path: string): Promise<Writable> {
  try {
    const stat = await fs.stat(path).catch(() => undefined);
    if (stat?.isDirectory()) throw new UsageError(`cannot write ${path}: it is a directory`);
    const stream = createWriteStream(path);
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', reject);
    });
    return stream;
  } catch (err) {
    if (err instanceof MailsiftError) throw err;
    throw new UsageError(`cannot write ${path}: ${(err as Error).message}`);
  }
}
