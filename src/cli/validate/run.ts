import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { EXIT } from '../../errors.js';
import { validateStream, type RunResult } from '../../pipeline/validate-stream.js';
import { newProgress, type Progress } from '../../terminal/progress.js';
import { batchesInFlight, type Validator } from '../../engines/validator.js';
import { groupNames, outputDialect, prefixClashes, resolveColumns } from '../../write/output-plan.js';
import { openOutputs, splitFiles, type Output, type OutputShape } from '../../write/outputs.js';
import { refuseCollisions, type NamedPath } from '../../write/path-collisions.js';
import { SummaryFile } from '../../write/summary-file.js';
import { commitTogether, type Placement } from '../../write/atomic-file.js';
import { apiSettings, localSettings } from '../engine-choice.js';
import { runDryRun } from './dry-run.js';
import { RunReporter } from '../../terminal/run-reporter.js';
import { say } from '../../terminal/say.js';
import { openStores, type CacheTarget, type Stores } from '../../stores/open-stores.js';
import type { BindingOptions } from '../../stores/binding.js';
import { Dedupe } from '../../dedupe/dedupe.js';
import { CleanUp } from '../clean-up.js';
import { interruptedAdvice, watchInterrupts, INTERRUPT_GRACE_MS, type Interrupts } from '../interrupt.js';
import { failureLines } from '../../terminal/failure-advice.js';
import { hideInArgv, hideRedisPassword } from '../argv-secrets.js';
import type { ValidatePlan } from './plan.js';
import type { LimitChange } from '../../engines/api/concurrency-limit.js';
import { openAddressInput } from '../../pipeline/address-check.js';
import { checkedRows, preflight, type RowCheck } from '../../pipeline/preflight.js';
import { openInput, scanCsvFile, scanTextFile } from '../../read/open-input.js';
import { interruptedReading } from '../../read/spool.js';
import { stdinAsFile } from '../../read/stdin-file.js';
import { checkedColumns, type Input } from '../../read/input-row.js';
import { describeChoice } from '../../read/column.js';
import { xlsxRowCheck } from '../../write/xlsx-writer.js';
import { XLSX_SHEET_LIMITS } from '../../write/xlsx-xml.js';
import { ReportFile } from './report-file.js';
import { plural, printable } from '../../format.js';
import type { Unused } from '../../stores/unused.js';
import type { Io } from '../io.js';

/**
 * One validate run as its steps see it: the plan, the io, and the two ways of
 * speaking on stderr. The reporter, once it exists, draws a progress line that
 * whatever else is said must not tear.
 */
interface Run {
  readonly plan: ValidatePlan;
  readonly io: Io;
  /** a line on stderr, even with --quiet */
  say(line: string): void;
  /** a line on stderr unless --quiet (warnings stay in the --summary JSON) */
  notice(line: string): void;
  reporter?: RunReporter;
}

/**
 * `mailsift validate`: runs a plan through the pipeline, and returns the exit
 * code its result maps to; a run that cannot go on throws. Its steps, in order:
 * refuse overlapping files, read the input (and, for a file, everything that
 * would stop the run halfway), then either a dry run or the run proper: open
 * the stores, the outputs and the engine, validate, put the outputs in place,
 * and report.
 */
export async function run(plan: ValidatePlan, io: Io): Promise<number> {
  const r: Run = {
    plan,
    io,
    say: (line) => say(io.stderr, line),
    notice: (line) => {
      if (!plan.terminal.quiet) say(io.stderr, line);
    },
  };
  for (const line of plan.warnings) r.notice(line);
  hideInArgv(io, plan.argvSecret);
  if (plan.stores.cache?.kind === 'redis') hideRedisPassword(io, plan.stores.cache.redis);
  // No file written may be the input or another output, under any name: refused
  // before the input is read or anything is created — and again once every
  // output and lock is open, since a link may appear at a path meanwhile (a
  // run waiting for a cache lock waits up to a minute).
  const files = runFiles(plan, io);
  await refuseCollisions(files);
  // Listening from the first moment: a Ctrl-C while a workbook is copied from
  // stdin or its shared strings are read ends the run at once, exit 130, and
  // the temp copy goes with it.
  const interrupts = watchInterrupts({
    graceMs: INTERRUPT_GRACE_MS,
    reading: true,
    target: io.signals,
    clock: io.clock,
    forceExit: (code) => io.exit(code),
    notice: (line) => {
      r.reporter?.stop();
      r.say(line);
    },
  });
  const input = await readInput(r, interrupts);
  interrupts.sending();
  const cleanUp = new CleanUp();
  // Undone last: its force-exit timer bounds a clean-up that hangs after Ctrl-C.
  cleanUp.defer(() => interrupts.dispose());
  cleanUp.defer(() => input.close());
  return cleanUp.around(async () => {
    const shape = outputShape(r, input);
    return plan.dryRun ? dryRun(r, input, interrupts, cleanUp) : validateRun(r, input, shape, interrupts, cleanUp, files);
  });
}

/**
 * Opens the input and reads its shape before anything is created or printed
 * (a bad input leaves no half-written output behind): an input without
 * addresses (the wrong column, sheet or file) stops here, before anything is
 * sent. For a file, whatever would end the run in exit 2 halfway is found now
 * too, before anything is paid for. On failure, nothing is left open.
 */
async function readInput(r: Run, interrupts: Interrupts): Promise<Input> {
  const { plan, io } = r;
  const read = { path: plan.input, ...plan.read, stdin: io.stdin, signal: interrupts.stop };
  // asked before stdin is read: where its reading begins
  const again = plan.input === '-' && !plan.dryRun ? stdinAsFile(io.stdin) : undefined;
  let input: Input;
  try {
    input = await openAddressInput({ ...read, onNotice: r.notice, clock: io.clock });
  } catch (err) {
    interrupts.dispose();
    throw err;
  }
  try {
    const check = outputCheck(plan, input);
    if (plan.dryRun) {
      // a dry run reads every row anyway: the same check as they pass
      if (check) input = { ...input, rows: checkedRows(input.rows, check) };
    } else if (again !== undefined || (await isRegularFile(plan.input))) {
      const delimiter = input.dialect?.delimiter;
      const shape = { delimiter: delimiter!, width: input.header.length, cellChars: check?.cellChars, signal: interrupts.stop };
      const second = () => (again ? { ...read, stdin: again() } : read);
      await preflight({
        open: () => openInput(second()),
        ...(input.kind === 'csv' && delimiter !== undefined ? { scan: () => scanCsvFile(second(), shape) } : {}),
        ...(input.kind === 'text' ? { scan: () => scanTextFile(second(), shape) } : {}),
        check,
        signal: interrupts.stop,
      }).catch((err: unknown) => {
        throw interrupts.stop.aborted ? interruptedReading(plan.input, interrupts.stop) : err;
      });
    }
  } catch (err) {
    input.close();
    interrupts.dispose();
    throw err;
  }
  return input;
}

/**
 * The outputs' shape from the input's: the verdict columns (once for each
 * checked column, named after it, when several), renamed when the input has
 * a column of their name (said), and the CSV output's dialect (the input's,
 * changed by the flags; --bom with no BOM to have is exit 2, before anything
 * is sent).
 */
function outputShape(r: Run, input: Input): OutputShape {
  const { output } = r.plan;
  const checked = checkedColumns(input);
  const columns = resolveColumns(
    output.columns,
    input.kind,
    input.header,
    checked.map((c) => input.header[c] || `column${c + 1}`),
  );
  const dialect = outputDialect(input.dialect, output.dialect);
  if (columns.prefix && (output.format === 'csv' || output.format === 'xlsx')) {
    const clashes = prefixClashes(columns, input.header);
    const appended = columns.groups ? groupNames(columns) : columns.order.filter((c) => c !== 'input').map((c) => columns.prefix + c);
    const names = appended.length > 2 ? `${appended.slice(0, 2).join(', ')}, …` : appended.join(', ');
    r.notice(
      `${printable(clashes.map((c) => JSON.stringify(c)).join(', '))}: the input already has ${clashes.length === 1 ? 'a column' : 'columns'} of that name, so the appended columns are named ${names} (prefix ${columns.prefix})`,
    );
  }
  return { header: input.header, columns, emailColumn: input.emailColumn, dialect, checkedColumns: checked };
}

/**
 * Which column is checked, said once nothing more can refuse the input (a line
 * before an exit-2 error would only be noise): for a dry run at once, for a
 * run once every output is open.
 */
function sayColumns(r: Run, input: Input): void {
  if (input.columnChoice) for (const line of describeChoice(input.header, input.columnChoice)) r.notice(line);
}

/** What the journal and the cache are bound to: verdicts of another engine, server or depth of checking are not reused. */
function jobOf(plan: ValidatePlan): BindingOptions {
  const { engine: choice, engineSettings } = plan;
  return {
    engine: choice.engine,
    baseUrl: choice.engine === 'api' ? choice.baseUrl : undefined,
    dnsServer: engineSettings.dnsServer,
    dns: engineSettings.dns,
    smtp: plan.smtp !== undefined,
  };
}

/** `--dry-run`: the pipeline against a counting engine; creates no file, reads only a journal or cache that exists. */
async function dryRun(r: Run, input: Input, interrupts: Interrupts, cleanUp: CleanUp): Promise<number> {
  const { plan, io } = r;
  const { engine: choice, stores } = plan;
  sayColumns(r, input);
  // A dry run creates no file: only a journal or cache that exists can tell what is already known.
  const { known, journal } = await openStores(
    { ...stores, journal: existing(stores.journal), cache: existingCache(stores.cache), readOnly: true, clock: io.clock },
    jobOf(plan),
  );
  if (journal?.restarted) r.notice(journalTooOld(journal.path, journal.restarted.began, stores.cacheTtlMs, true));
  cleanUp.defer(() => known?.close());
  const report = plan.report === undefined ? undefined : await ReportFile.open(plan.report, { input: plan.input, engine: choice.engine }, io);
  cleanUp.defer(() => report?.discard()); // nothing once it is written
  const options = { ...plan.batching, terminal: plan.terminal, stop: interrupts.stop, report };
  await runDryRun(input, choice.engine, options, io, known, choice.engine === 'api' ? choice : undefined);
  return interrupts.exitCode() ?? EXIT.ok;
}

/** The run proper: stores, outputs and engine opened, the rows validated and written, the outputs put in place, the summary said. */
async function validateRun(r: Run, input: Input, shape: OutputShape, interrupts: Interrupts, cleanUp: CleanUp, files: readonly NamedPath[]): Promise<number> {
  const { plan, io } = r;
  const { engine: choice, stores } = plan;
  const known = await openKnown(r, cleanUp);
  const outputs = await openOutputSet(r, shape, interrupts, cleanUp);
  // What was checked is what is written: checked again now that everything is open.
  await refuseCollisions(files);
  sayColumns(r, input);
  if (choice.engine === 'local' && choice.notice) r.notice(choice.notice);

  const progress = newProgress(io.clock.now());
  if (input.bytes) progress.inputBytes = input.bytes;
  // Ctrl-C must also hold back requests the API client has queued (linked to the interrupts below).
  const stopSending = new AbortController();
  const validator = await createValidator(r, progress, stopSending.signal);
  cleanUp.defer(() => validator.close());

  const reporter = new RunReporter(progress, io, {
    // --verbose lines would tear through a progress line redrawn in place
    flags: plan.engineSettings.verbose ? { ...plan.terminal, progress: false } : plan.terminal,
    failOn: plan.failOn,
    output: outputs.output.label,
    summaryFile: plan.summary,
    reportFile: plan.report,
  });
  r.reporter = reporter;
  await reporter.start();
  cleanUp.defer(() => reporter.stop());
  const { stop, abandon } = interrupts;
  const { gone } = outputs.output;
  if (stop.aborted) stopSending.abort(stop.reason);
  stop.addEventListener('abort', () => stopSending.abort(stop.reason), { once: true });
  // The reader of the output gone (`| head`): what nobody reads is not paid for. The API
  // client's queued requests are held back as after Ctrl-C, those in flight still reach the journal.
  if (gone.aborted) interrupts.readerGone();
  gone.addEventListener('abort', () => interrupts.readerGone(), { once: true });

  const result = await validateStream({
    input,
    validator,
    clock: io.clock,
    writer: outputs.output.writer,
    batchSize: plan.batching.batchSize,
    concurrency: batchesInFlight(validator, plan.batching.concurrency),
    filter: plan.filter,
    onProgress: (p) => Object.assign(progress, p),
    onRow: outputs.report?.onRow,
    explainFailures: choice.engine === 'api' ? (f) => failureLines(f, { baseUrlSource: choice.baseUrlSource, journal: stores.journal }) : undefined,
    known: known.known,
    // a resumed run starts from the journal's index instead of a second copy of its addresses
    dedupe: new Dedupe({ resumed: known.journal?.memo }),
    stop,
    cancel: abandon,
  });
  outputs.ended(result);
  await cleanUp.run();
  if (gone.aborted) return EXIT.ok; // the reader went away (`| head`): end quietly

  const { summary } = result;
  if (known.cacheLost() !== undefined && known.cache) {
    // the output is whole and every row has its verdict: exit 0, with the loss in the summary
    summary.cacheLost = { cache: known.cache.path, unstored: known.cache.unstored ?? 0 };
    summary.warnings = [...(summary.warnings ?? []), known.cacheLost()!];
  }
  const signalled = interrupts.exitCode();
  await commitOutputs(r, outputs, result);
  const code = reporter.finish(summary, result.complete, progress);
  if (signalled === undefined) return code;
  r.say(interruptedAdvice(stores.journal, validator.engine));
  return signalled;
}

/** The journal and the cache, opened and bound to the job; what they will not reuse, said. */
async function openKnown(r: Run, cleanUp: CleanUp): Promise<Stores & { cacheLost(): string | undefined }> {
  const { stores } = r.plan;
  let lost: string | undefined;
  const opened = await openStores(
    {
      ...stores,
      clock: r.io.clock,
      // said at once, even with --quiet: a run that goes on without its cache leaves the next ones to pay again
      onCacheLost: (line) => {
        lost = line;
        if (r.reporter) r.reporter.say(`warning: ${line}`);
        else r.say(`warning: ${line}`);
      },
    },
    jobOf(r.plan),
  );
  cleanUp.defer(() => opened.known?.close()); // else the journal's lock file outlives us
  const { journal, cache } = opened;
  if (journal?.restarted) r.notice(journalTooOld(journal.path, journal.restarted.began, stores.cacheTtlMs, false));
  sayUnused(r, '--journal', journal);
  sayUnused(r, '--cache', cache);
  return { ...opened, cacheLost: () => lost };
}

/** The run's outputs, one set: the rows (-o, --split or stdout), --summary and --report. */
interface OutputSet {
  output: Output;
  summaryFile?: SummaryFile;
  report?: ReportFile;
  /** the output files, written whole, waiting to be put in place with the summary and the report */
  placements(): Placement[];
  /** the run's result is in hand: the clean-up ends the outputs as it says */
  ended(result: RunResult): void;
}

/**
 * Every output proven writable before the first request: the --split
 * directory is made first, since --summary or --report may be inside it. The
 * clean-up ends them (flushed and closed, to be put in place as the result
 * says: complete, partial or failed), and drops the summary and the report of
 * a run that has no result.
 */
async function openOutputSet(r: Run, shape: OutputShape, interrupts: Interrupts, cleanUp: CleanUp): Promise<OutputSet> {
  const { plan, io } = r;
  let summaryFile: SummaryFile | undefined;
  let report: ReportFile | undefined;
  let result: RunResult | undefined;
  /** a result in hand and every output flushed: the summary and the report may be written */
  let flushed = false;
  let output: Output | undefined;
  let placements: Placement[] = [];
  // Undone after the output is ended (steps are undone in reverse), which sets `flushed`.
  cleanUp.defer(() => (!flushed || output?.gone.aborted ? Promise.all([summaryFile?.discard(), report?.discard()]) : undefined));
  // A failed write must fail the run (rows would be lost), but not mask an error already on its way (see CleanUp.around).
  cleanUp.defer(async () => {
    if (output === undefined) return;
    placements = await output.end(result === undefined ? 'failed' : result.complete ? 'complete' : 'partial');
    if (result !== undefined) for (const line of output.notices()) r.say(line);
    flushed = result !== undefined;
  });
  output = await openOutputs(plan.output, shape, io, interrupts.stop);
  if (plan.summary) summaryFile = await SummaryFile.open(plan.summary, io);
  if (plan.report !== undefined) report = await ReportFile.open(plan.report, { input: plan.input, engine: plan.engine.engine }, io);
  return { output, summaryFile, report, placements: () => placements, ended: (r) => void (result = r) };
}

/**
 * The outputs are one set (-o or --split, --summary, --report): all written,
 * then put in place together; one that cannot be written (a full disk) leaves
 * every older file as it was. Only a complete run replaces an output; an
 * interrupted one fills only an empty place.
 */
async function commitOutputs(r: Run, outputs: OutputSet, result: RunResult): Promise<void> {
  const outcome = result.complete ? 'complete' : 'partial';
  const set = [...outputs.placements()];
  try {
    if (outputs.summaryFile) set.push(await outputs.summaryFile.write(result.summary, outcome));
    if (outputs.report) set.push(await outputs.report.write(result.summary, { output: outputs.output.label }, outcome));
  } catch (err) {
    await Promise.allSettled(set.map((p) => p.file.discard()));
    throw err;
  }
  const kept = await commitTogether(set);
  for (const label of kept) r.notice(`${label} left as it was: only a complete run replaces an output`);
}

/** The engine the plan names, loaded only now: undici alone is a tenth of a second of start-up, the offline engine's lists more. */
async function createValidator(r: Run, progress: Progress, stop: AbortSignal): Promise<Validator> {
  const { plan } = r;
  const choice = plan.engine;
  if (choice.engine === 'api') {
    return (await import('../../engines/api/client.js')).createApiValidator({
      ...apiSettings(choice, plan.engineSettings, r.say),
      clock: r.io.clock,
      concurrency: plan.batching.concurrency,
      // --verbose: each change of the in-flight limit, with its reason
      ...(plan.engineSettings.verbose ? { onConcurrencyChange: (c: LimitChange) => r.say(`in flight: limit ${c.from} → ${c.to}: ${c.reason}`) } : {}),
      onRateLimitWait: (until) => (progress.rateLimitWaitUntil = until),
      stop,
    });
  }
  return (await import('../../engines/local/index.js')).createLocalValidator({
    ...localSettings(plan.engineSettings, plan.smtp, r.notice),
    clock: r.io.clock,
    // the progress line moves while a batch waits on DNS or SMTP
    onChecked: (addresses) => (progress.addressesChecked += addresses),
  });
}

/**
 * What a store read and will not reuse, said once per store: damage (even with
 * --quiet: a disk, or a hand, changed the file), then records of the first
 * format and records resting on less than this run asks for (notices).
 */
function sayUnused(r: Run, flag: string, store: { path: string; unused: Unused } | undefined): void {
  if (store === undefined) return;
  const { damaged, older, weaker } = store.unused;
  const where = `${flag} ${store.path}`;
  if (damaged > 0) {
    r.say(
      `${where}: ${plural(damaged, 'damaged record', 'damaged records')} (failing the checksum or the format) ignored: ${damaged === 1 ? 'its address is' : 'their addresses are'} asked again`,
    );
  }
  if (older > 0)
    r.notice(`${where}: ${plural(older, 'address', 'addresses')} recorded by an older mailsift, without a checksum, ${older === 1 ? 'is' : 'are'} asked again`);
  if (weaker > 0)
    r.notice(
      `${where}: ${plural(weaker, 'verdict rests', 'verdicts rest')} on less than this run asks for (made with --no-dns, or without --smtp): asked again`,
    );
}

/**
 * The check of each input row against the .xlsx output's limits, made before
 * the run. Every row's cells are checked, whatever --only, --except, --unique
 * or --split will keep: refusing a row that would have been dropped costs a
 * re-run with CSV, finding it after paying costs the list. The row count is
 * checked here only when every row reaches one file; otherwise the writer
 * counts them as they come.
 */
function outputCheck(plan: ValidatePlan, input: Input): RowCheck | undefined {
  const { output, filter } = plan;
  if (output.format !== 'xlsx') return undefined;
  const columns = resolveColumns(output.columns, input.kind);
  if (output.split) return xlsxRowCheck(`--split ${output.split.dir}`, input.header, columns, { ...XLSX_SHEET_LIMITS, rows: Infinity }, '--format csv');
  if (filter.only || filter.except || filter.unique)
    return xlsxRowCheck(output.file ?? 'stdout', input.header, columns, { ...XLSX_SHEET_LIMITS, rows: Infinity });
  return xlsxRowCheck(output.file ?? 'stdout', input.header, columns);
}

/** Whether the input names a file that can be read a second time from its start (not stdin, a FIFO or a device). */
async function isRegularFile(path: string): Promise<boolean> {
  if (path === '-') return false;
  return (await stat(path).catch(() => undefined))?.isFile() ?? false;
}

/** A journal begun longer ago than --cache-ttl: what became of it, in one line. */
function journalTooOld(path: string, began: number, ttlMs: number, dryRun: boolean): string {
  const when = new Date(began).toISOString().slice(0, 16).replace('T', ' ');
  return `--journal ${path} holds a job begun ${when} UTC, longer ago than --cache-ttl ${flagDuration(ttlMs)}: its verdicts are too old to reuse, ${
    dryRun ? 'so a run would begin it afresh' : 'so it is begun afresh'
  } (a journal resumes one job; --cache reuses verdicts across runs)`;
}

/** Milliseconds as the duration flags spell them (30d, 12h, 90m), in the largest unit that divides them. */
function flagDuration(ms: number): string {
  const unit = (
    [
      ['w', 604_800_000],
      ['d', 86_400_000],
      ['h', 3_600_000],
      ['m', 60_000],
      ['s', 1000],
    ] as const
  ).find(([, size]) => ms > 0 && ms % size === 0);
  return unit ? `${ms / unit[1]}${unit[0]}` : `${ms}ms`;
}

/** `path` when it names something that exists (or is `-`, refused later), else undefined. */
function existing(path: string | undefined): string | undefined {
  return path !== undefined && (path === '-' || existsSync(path)) ? path : undefined;
}

/** The cache when there is one to read: Redis, or a file that exists. */
function existingCache(cache: CacheTarget | undefined): CacheTarget | undefined {
  return cache?.kind === 'file' && existing(cache.path) === undefined ? undefined : cache;
}

/**
 * Every file the run reads or writes, for refuseCollisions: the input (stdin
 * by its descriptor: `< in.csv`), the outputs, the stores and their lock
 * files, stdout when the rows go there (`>> in.csv`) and stderr. A stream of
 * the io that is no descriptor of this process (an in-process run's buffer)
 * is no file, and is left out.
 */
function runFiles(plan: ValidatePlan, io: Io): NamedPath[] {
  const { stores, output } = plan;
  const cache = stores.cache?.kind === 'file' ? stores.cache.path : undefined;
  const lock = (flag: string, path: string | undefined): NamedPath[] =>
    path === undefined || path === '-' ? [] : [{ flag: `${flag}'s lock file`, path: `${path}.lock`, give: flag }];
  const fd = (flag: string, stream: { fd?: number }): NamedPath[] => (stream.fd === undefined ? [] : [{ flag, fd: stream.fd }]);
  return [
    ...(plan.input === '-' ? fd('input', io.stdin) : [{ flag: 'input', path: plan.input }]),
    { flag: '-o', path: output.file },
    ...(output.file === undefined && !output.split ? fd('stdout', io.stdout) : []),
    ...fd('stderr', io.stderr),
    ...splitFiles(output).map((path) => ({ flag: '--split', path })),
    { flag: '--summary', path: plan.summary },
    { flag: '--report', path: plan.report },
    { flag: '--journal', path: stores.journal },
    ...lock('--journal', stores.journal),
    { flag: '--cache', path: cache },
    ...lock('--cache', cache),
  ];
}
