import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { EXIT } from '../errors.js';
import { validateStream, type RunResult } from '../pipeline/validate-stream.js';
import { newProgress } from '../terminal/progress.js';
import type { Validator } from '../engines/validator.js';
import { groupNames, outputDialect, prefixClashes, resolveColumns } from '../write/output-plan.js';
import { openOutputs, splitFiles, type Output } from '../write/outputs.js';
import { refuseCollisions, type NamedPath } from '../write/path-collisions.js';
import { SummaryFile } from '../write/summary-file.js';
import { commitTogether, type Placement } from '../write/atomic-file.js';
import { apiSettings, localSettings } from './api-config.js';
import { runDryRun } from './run-dry-run.js';
import { RunReporter } from '../terminal/run-reporter.js';
import { openStores } from '../stores/open-stores.js';
import { Dedupe } from '../dedupe/dedupe.js';
import { CleanUp } from './clean-up.js';
import { interruptedAdvice, watchInterrupts, INTERRUPT_GRACE_MS, type Interrupts } from './interrupt.js';
import { failureLines } from '../terminal/failure-advice.js';
import { hideInArgv } from './smtp-flags.js';
import type { ValidatePlan } from './plan-validate.js';
import { MAX_IN_FLIGHT, type LimitChange } from '../engines/api/concurrency-limit.js';
import { openAddressInput } from '../pipeline/address-check.js';
import { checkedRows, preflight, type RowCheck } from '../pipeline/preflight.js';
import { openInput, scanCsvFile } from '../read/open-input.js';
import { interruptedReading } from '../read/spool.js';
import { checkedColumns, type Input } from '../read/input-row.js';
import { describeChoice } from '../read/column.js';
import { xlsxRowCheck } from '../write/xlsx-writer.js';
import { XLSX_SHEET_LIMITS } from '../write/xlsx-xml.js';
import { ReportFile } from './report-file.js';
import { plural, printable } from '../format.js';
import type { Unused } from '../stores/unused.js';

const say = (line: string): void => {
  process.stderr.write(`mailsift: ${printable(line)}\n`);
};

/**
 * `mailsift validate`: runs a plan through the pipeline, and returns the exit
 * code its result maps to (main.ts sets it); a run that cannot go on throws.
 */
export async function runValidate(plan: ValidatePlan): Promise<number> {
  const { smtp, engine: choice, terminal, stores, batching } = plan;
  /** what --quiet silences: everything on stderr but errors (warnings stay in the --summary JSON) */
  const notice = (line: string): void => {
    if (!terminal.quiet) say(line);
  };
  for (const line of plan.warnings) notice(line);
  hideInArgv(plan.argvSecret);
  const inputPath = plan.input;
  // No file written may be the input or another output, under any name: refused
  // before the input is read or anything is created — and again once every
  // output and lock is open, since a link may appear at a path meanwhile (a
  // run waiting for a cache lock waits up to a minute).
  const files = runFiles(plan);
  await refuseCollisions(files);
  let reporter: RunReporter | undefined;
  // Listening from the first moment: a Ctrl-C while a workbook is copied from
  // stdin or its shared strings are read ends the run at once, exit 130, and
  // the temp copy goes with it.
  const interrupts: Interrupts = watchInterrupts({
    graceMs: INTERRUPT_GRACE_MS,
    reading: true,
    notice: (line) => {
      reporter?.stop();
      say(line);
    },
  });
  // Read the input's shape before anything is created or printed: a bad input
  // leaves no half-written output behind.
  let input;
  try {
    // An input without addresses (the wrong column, sheet or file) stops here, before anything is sent.
    input = await openAddressInput({
      path: inputPath,
      column: plan.read.column,
      sheet: plan.read.sheet,
      encoding: plan.read.encoding,
      onNotice: notice,
      signal: interrupts.stop,
    });
  } catch (err) {
    interrupts.dispose();
    throw err;
  }
  try {
    // For a file, whatever would end the run in exit 2 halfway is found now, before anything is paid for.
    const check = outputCheck(plan, input);
    if (plan.dryRun) {
      // a dry run reads every row anyway: the same check as they pass
      if (check) input = { ...input, rows: checkedRows(input.rows, check) };
    } else if (await isRegularFile(inputPath)) {
      const read = { path: inputPath, column: plan.read.column, sheet: plan.read.sheet, encoding: plan.read.encoding, signal: interrupts.stop };
      const delimiter = input.dialect?.delimiter;
      const shape = { delimiter: delimiter!, width: input.header.length, cellChars: check?.cellChars, signal: interrupts.stop };
      await preflight({
        open: () => openInput(read),
        ...(input.kind === 'csv' && delimiter !== undefined ? { scan: () => scanCsvFile(read, shape) } : {}),
        check,
        signal: interrupts.stop,
      }).catch((err: unknown) => {
        throw interrupts.stop.aborted ? interruptedReading(inputPath, interrupts.stop) : err;
      });
    }
  } catch (err) {
    input.close();
    interrupts.dispose();
    throw err;
  }
  interrupts.sending();
  const cleanUp = new CleanUp();
  // Undone last: its force-exit timer bounds a clean-up that hangs after Ctrl-C.
  cleanUp.defer(() => interrupts.dispose());
  cleanUp.defer(() => input.close());
  return cleanUp.around(async () => {
    const checked = checkedColumns(input);
    // several checked columns: the verdict columns once for each, named after it
    const columns = resolveColumns(plan.output.columns, input.kind, input.header, checked.map((c) => input.header[c] || `column${c + 1}`));
    // the CSV output's dialect: the input's, changed by the flags (--bom with no BOM to have is exit 2, before anything is sent)
    const dialect = outputDialect(input.dialect, plan.output.dialect);
    const { format } = plan.output;
    if (columns.prefix && (format === 'csv' || format === 'xlsx')) {
      const clashes = prefixClashes(columns, input.header);
      const appended = columns.groups ? groupNames(columns) : columns.order.filter((c) => c !== 'input').map((c) => columns.prefix + c);
      const names = appended.length > 2 ? `${appended.slice(0, 2).join(', ')}, …` : appended.join(', ');
      notice(`${printable(clashes.map((c) => JSON.stringify(c)).join(', '))}: the input already has ${clashes.length === 1 ? 'a column' : 'columns'} of that name, so the appended columns are named ${names} (prefix ${columns.prefix})`);
    }
    const job = {
      engine: choice.engine,
      baseUrl: choice.engine === 'api' ? choice.baseUrl : undefined,
      dnsServer: plan.engineSettings.dnsServer,
      dns: plan.engineSettings.dns,
      smtp: smtp !== undefined,
    };
    // The pipeline keeps enough batches ready for the most the API client may put in flight;
    // the offline engine has its own limits (DNS, SMTP), and four batches keep it busy.
    const batchesInFlight = batching.concurrency !== 'auto' ? batching.concurrency : choice.engine === 'api' ? MAX_IN_FLIGHT : 4;
    // Which column is checked, said once nothing more can refuse the input (a line before an
    // exit-2 error would only be noise): here for a dry run, below once every output is open.
    const sayColumns = (): void => {
      if (input.columnChoice) for (const line of describeChoice(input.header, input.columnChoice)) notice(line);
    };
    if (plan.dryRun) {
      sayColumns();
      // A dry run creates no file: only a journal or cache that exists can tell what is already known.
      const { known, journal } = await openStores({ ...stores, journal: existing(stores.journal), cache: existing(stores.cache), readOnly: true }, job);
      if (journal?.restarted) notice(journalTooOld(journal.path, journal.restarted.began, stores.cacheTtlMs, true));
      cleanUp.defer(() => known?.close());
      const report = plan.report === undefined ? undefined : await ReportFile.open(plan.report, { input: inputPath, engine: choice.engine });
      cleanUp.defer(() => report?.discard()); // nothing once it is written
      await runDryRun(input, choice.engine, { ...batching, batchesInFlight, terminal, stop: interrupts.stop, report }, known, choice.engine === 'api' ? choice : undefined);
      return interrupts.exitCode() ?? EXIT.ok;
    }

    let cacheLost: string | undefined;
    const { known, journal, cache } = await openStores(
      {
        ...stores,
        // said at once, even with --quiet: a run that goes on without its cache leaves the next ones to pay again
        onCacheLost: (line) => {
          cacheLost = line;
          if (reporter) reporter.say(`warning: ${line}`);
          else say(`warning: ${line}`);
        },
      },
      job,
    );
    cleanUp.defer(() => known?.close()); // else the journal's lock file outlives us
    if (journal?.restarted) notice(journalTooOld(journal.path, journal.restarted.began, stores.cacheTtlMs, false));
    sayUnused('--journal', journal, notice);
    sayUnused('--cache', cache, notice);
    // Every output is proven writable before the first request: the --split
    // directory is made first, since --summary or --report may be inside it.
    let summaryFile: SummaryFile | undefined;
    let report: ReportFile | undefined;
    /** a result in hand and every output flushed: the summary and the report may be written */
    let ended = false;
    let output: Output | undefined;
    /** the output files, written whole, waiting to be put in place with the summary and the report */
    let placements: Placement[] = [];
    // Undone after the output is ended (steps are undone in reverse), which sets `ended`.
    cleanUp.defer(() => (!ended || output?.gone.aborted ? Promise.all([summaryFile?.discard(), report?.discard()]) : undefined));
    let result: RunResult | undefined;
    // A failed write must fail the run (rows would be lost), but not mask an error already on its way (see CleanUp.around).
    cleanUp.defer(async () => {
      if (output === undefined) return;
      placements = await output.end(result === undefined ? 'failed' : result.complete ? 'complete' : 'partial');
      if (result !== undefined) for (const line of output.notices()) say(line);
      ended = result !== undefined;
    });
    output = await openOutputs(plan.output, input.header, columns, input.emailColumn, interrupts.stop, dialect, checked);
    if (plan.summary) summaryFile = await SummaryFile.open(plan.summary);
    if (plan.report !== undefined) report = await ReportFile.open(plan.report, { input: inputPath, engine: choice.engine });
    // What was checked is what is written: checked again now that everything is open.
    await refuseCollisions(files);
    sayColumns();
    if (choice.engine === 'local' && choice.notice) notice(choice.notice);

    const progress = newProgress();
    if (input.bytes) progress.inputBytes = input.bytes;
    // Ctrl-C must also hold back requests the API client has queued (linked to watchInterrupts below).
    const stopSending = new AbortController();
    const validator: Validator =
      choice.engine === 'api'
        ? // loaded only when used: undici alone is a tenth of a second of start-up
          (await import('../engines/api/client.js')).createApiValidator({
            ...apiSettings(choice, plan.engineSettings, say),
            concurrency: batching.concurrency,
            // --verbose: each change of the in-flight limit, with its reason
            ...(plan.engineSettings.verbose ? { onConcurrencyChange: (c: LimitChange) => say(`in flight: limit ${c.from} → ${c.to}: ${c.reason}`) } : {}),
            onRateLimitWait: (until) => (progress.rateLimitWaitUntil = until),
            stop: stopSending.signal,
          })
        : // loaded only when used: its lists cost start-up time an API run need not pay
          (await import('../engines/local/index.js')).createLocalValidator({
            ...localSettings(plan.engineSettings, smtp, notice),
            // the progress line moves while a batch waits on DNS or SMTP
            onChecked: (addresses) => (progress.addressesChecked += addresses),
          });
    cleanUp.defer(() => validator.close());

    reporter = new RunReporter(progress, {
      // --verbose lines would tear through a progress line redrawn in place
      flags: plan.engineSettings.verbose ? { ...terminal, progress: false } : terminal,
      failOn: plan.failOn,
      output: output.label,
      summaryFile: plan.summary,
      reportFile: plan.report,
    });
    await reporter.start();
    cleanUp.defer(() => reporter?.stop());
    const { stop, abandon } = interrupts;
    const { gone } = output;
    if (stop.aborted) stopSending.abort(stop.reason);
    stop.addEventListener('abort', () => stopSending.abort(stop.reason), { once: true });
    // The reader of the output gone (`| head`): what nobody reads is not paid for. The API
    // client's queued requests are held back as after Ctrl-C, those in flight still reach the journal.
    if (gone.aborted) interrupts.readerGone();
    gone.addEventListener('abort', () => interrupts.readerGone(), { once: true });

    result = await validateStream({
      input,
      validator,
      writer: output.writer,
      batchSize: batching.batchSize,
      concurrency: batchesInFlight,
      filter: plan.filter,
      onProgress: (p) => Object.assign(progress, p),
      onRow: report?.onRow,
      explainFailures: choice.engine === 'api' ? (f) => failureLines(f, { baseUrlSource: choice.baseUrlSource, journal: stores.journal }) : undefined,
      known,
      // a resumed run starts from the journal's index instead of a second copy of its addresses
      dedupe: new Dedupe({ resumed: journal?.memo }),
      stop,
      cancel: abandon,
    });
    await cleanUp.run();
    if (gone.aborted) return EXIT.ok; // the reader went away (`| head`): end quietly

    const { summary } = result;
    if (cacheLost !== undefined && cache) {
      // the output is whole and every row has its verdict: exit 0, with the loss in the summary
      summary.cacheLost = { cache: cache.path, unstored: cache.unstored ?? 0 };
      summary.warnings = [...(summary.warnings ?? []), cacheLost];
    }
    const signalled = interrupts.exitCode();
    // The outputs are one set (-o or --split, --summary, --report): all written, then put in
    // place together; one that cannot be written (a full disk) leaves every older file as it was.
    // Only a complete run replaces an output; an interrupted one fills only an empty place.
    const outcome = result.complete ? 'complete' : 'partial';
    const set = [...placements];
    try {
      if (summaryFile) set.push(await summaryFile.write(summary, outcome));
      if (report) set.push(await report.write(summary, { output: output.label }, outcome));
    } catch (err) {
      await Promise.allSettled(set.map((p) => p.file.discard()));
      throw err;
    }
    const kept = await commitTogether(set);
    for (const label of kept) notice(`${label} left as it was: only a complete run replaces an output`);
    const code = reporter.finish(summary, result.complete, progress);
    if (signalled === undefined) return code;
    say(interruptedAdvice(stores.journal, validator.engine));
    return signalled;
  });
}

/**
 * What a store read and will not reuse, said once per store: damage (even with
 * --quiet: a disk, or a hand, changed the file), then records of the first
 * format and records resting on less than this run asks for (notices).
 */
function sayUnused(flag: string, store: { path: string; unused: Unused } | undefined, notice: (line: string) => void): void {
  if (store === undefined) return;
  const { damaged, older, weaker } = store.unused;
  const where = `${flag} ${store.path}`;
  if (damaged > 0) {
    say(`${where}: ${plural(damaged, 'damaged record', 'damaged records')} (failing the checksum or the format) ignored: ${damaged === 1 ? 'its address is' : 'their addresses are'} asked again`);
  }
  if (older > 0) notice(`${where}: ${plural(older, 'address', 'addresses')} recorded by an older mailsift, without a checksum, ${older === 1 ? 'is' : 'are'} asked again`);
  if (weaker > 0) notice(`${where}: ${plural(weaker, 'verdict rests', 'verdicts rest')} on less than this run asks for (made with --no-dns, or without --smtp): asked again`);
}

/**
 * The check of each input row against the output's limits, when there is one
 * to make before the run: an .xlsx output that every row reaches. (With
 * --only, --except or --unique, which rows reach a file depends on the
 * verdicts: the writer checks them as they come.) With --split every row
 * reaches one of the files, so its cells are checked; how many rows each file
 * gets depends on the verdicts, so the row count is left to the writer.
 */
function outputCheck(plan: ValidatePlan, input: Input): RowCheck | undefined {
  const { output, filter } = plan;
  if (output.format !== 'xlsx' || filter.only || filter.except || filter.unique) return undefined;
  const columns = resolveColumns(output.columns, input.kind);
  if (output.split) return xlsxRowCheck(`--split ${output.split.dir}`, input.header, columns, { ...XLSX_SHEET_LIMITS, rows: Infinity }, '--format csv');
  return xlsxRowCheck(output.file ?? 'stdout', input.header, columns);
}

/** Whether the input can be read a second time from its start: a regular file (not stdin, a FIFO or a device). */
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
  const unit = ([['w', 604_800_000], ['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const).find(([, size]) => ms > 0 && ms % size === 0);
  return unit ? `${ms / unit[1]}${unit[0]}` : `${ms}ms`;
}

/** `path` when it names something that exists (or is `-`, refused later), else undefined. */
function existing(path: string | undefined): string | undefined {
  return path !== undefined && (path === '-' || /^rediss?:\/\//i.test(path) || existsSync(path)) ? path : undefined;
}

/**
 * Every file the run reads or writes, for refuseCollisions: the input (stdin
 * by its descriptor: `< in.csv`), the outputs, the stores and their lock
 * files, stdout when the rows go there (`>> in.csv`) and stderr.
 */
function runFiles(plan: ValidatePlan): NamedPath[] {
  const { stores, output } = plan;
  const lock = (flag: string, path: string | undefined): NamedPath[] =>
    path === undefined || path === '-' || /^rediss?:\/\//i.test(path.trim()) ? [] : [{ flag: `${flag}'s lock file`, path: `${path}.lock`, give: flag }];
  return [
    plan.input === '-' ? { flag: 'input', fd: 0 } : { flag: 'input', path: plan.input },
    { flag: '-o', path: output.file },
    ...(output.file === undefined && !output.split ? [{ flag: 'stdout', fd: 1 }] : []),
    { flag: 'stderr', fd: 2 },
    ...splitFiles(output).map((path) => ({ flag: '--split', path })),
    { flag: '--summary', path: plan.summary },
    { flag: '--report', path: plan.report },
    { flag: '--journal', path: stores.journal },
    ...lock('--journal', stores.journal),
    { flag: '--cache', path: stores.cache },
    ...lock('--cache', stores.cache),
  ];
}
