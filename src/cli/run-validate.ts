import { existsSync, fstatSync } from 'node:fs';
import { UsageError } from '../errors.js';
import { validateStream, type RunResult } from '../pipeline/validate-stream.js';
import { newProgress } from '../terminal/progress.js';
import { openInput } from '../read/open-input.js';
import type { Validator } from '../engines/validator.js';
import { resolveColumns } from '../write/output-plan.js';
import { openOutputs, splitFiles } from '../write/outputs.js';
import { refuseCollisions } from '../write/path-collisions.js';
import { SummaryFile } from '../write/summary-file.js';
import { apiSettings, localSettings } from './api-config.js';
import type { ValidateFlags } from './validate-command.js';
import { runDryRun } from './run-dry-run.js';
import { RunReporter } from '../terminal/run-reporter.js';
import type { TerminalFlags } from '../terminal/style.js';
import { openStores, type StoreOptions } from '../stores/open-stores.js';
import { Dedupe } from '../dedupe/dedupe.js';
import { CleanUp } from './clean-up.js';
import { interruptedAdvice, watchInterrupts, INTERRUPT_GRACE_MS, type Interrupts } from './interrupt.js';
import { failureLines } from '../terminal/failure-advice.js';
import { hideProxyPassword } from './smtp-flags.js';
import type { ValidatePlan } from './plan-validate.js';
import { MAX_IN_FLIGHT, type LimitChange } from '../engines/api/concurrency-limit.js';
import { ADDRESS_SHARE, checkAddressColumn, sheetAdvice } from '../pipeline/address-check.js';
import { isWorkbook, surveySheets } from '../read/sheet-survey.js';
import { ReportFile } from './report-file.js';

const say = (line: string): void => {
  process.stderr.write(`mailsift: ${line}\n`);
};

/** `mailsift validate`: runs a plan through the pipeline, and maps its result to an exit code. */
export async function runValidate(plan: ValidatePlan<ValidateFlags>): Promise<void> {
  const { flags, smtp, engine: choice } = plan;
  /** what --quiet silences: everything on stderr but errors (warnings stay in the --summary JSON) */
  const notice = (line: string): void => {
    if (!flags.quiet) say(line);
  };
  for (const line of plan.warnings) notice(line);
  hideProxyPassword(flags, smtp);
  const inputPath = plan.input;
  const { output: outputPlan } = plan;
  // No file written may be the input or another output, under any name: refused
  // before the input is read or anything is created.
  await refuseCollisions([
    { flag: 'input', path: inputPath },
    { flag: '-o', path: outputPlan.file },
    // `>> in.csv` would append the verdicts to the input while it is read
    { flag: 'stdout', path: outputPlan.file === undefined && !outputPlan.split && stdoutIsFile() ? '/dev/stdout' : undefined },
    ...splitFiles(outputPlan).map((path) => ({ flag: '--split', path })),
    { flag: '--summary', path: flags.summary },
    { flag: '--report', path: flags.report },
    { flag: '--journal', path: flags.journal },
    { flag: '--cache', path: flags.cache },
  ]);
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
  const addressCheck = {
    name: inputPath === '-' ? 'stdin' : inputPath,
    sheet: flags.sheet,
    otherSheets: inputPath === '-' ? undefined : () => surveySheets(inputPath, ADDRESS_SHARE),
  };
  let input;
  try {
    const opened = await openInput({
      path: inputPath,
      column: flags.column,
      sheet: flags.sheet,
      encoding: flags.encoding,
      onNotice: notice,
      signal: interrupts.stop,
    }).catch(async (err: unknown) => {
      // a sheet in which no column holds an "@": perhaps another sheet does
      if (err instanceof UsageError && err.message.startsWith('no address column found') && isWorkbook(inputPath)) {
        const advice = await sheetAdvice(addressCheck);
        if (advice !== undefined) throw new UsageError(advice);
      }
      throw err;
    });
    // An address column without addresses stops here, before anything is sent.
    input = await checkAddressColumn(opened, addressCheck).catch((err: unknown) => {
      opened.close();
      throw err;
    });
  } catch (err) {
    interrupts.dispose();
    throw err;
  }
  interrupts.sending();
  const cleanUp = new CleanUp();
  // Undone last: its force-exit timer bounds a clean-up that hangs after Ctrl-C.
  cleanUp.defer(() => interrupts.dispose());
  cleanUp.defer(() => input.close());
  return cleanUp.around(async () => {
    const columns = resolveColumns(plan.output.columns, input.kind);
    const job = { engine: choice.engine, baseUrl: choice.engine === 'api' ? choice.baseUrl : undefined, dnsServer: flags.dnsServer, smtp: smtp !== undefined };
    // Each part gets the options it uses, not every flag of the command.
    const stores: StoreOptions = { journal: flags.journal, cache: flags.cache, cacheTtl: flags.cacheTtl };
    const terminal: TerminalFlags = { color: flags.color, progress: flags.progress, quiet: flags.quiet };
    // The pipeline keeps enough batches ready for the most the API client may put in flight;
    // the offline engine has its own limits (DNS, SMTP), and four batches keep it busy.
    const batchesInFlight = flags.concurrency !== 'auto' ? flags.concurrency : choice.engine === 'api' ? MAX_IN_FLIGHT : 4;
    const batching = { batchSize: flags.batchSize, concurrency: flags.concurrency, batchesInFlight };
    if (flags.dryRun) {
      // A dry run creates no file: only a journal or cache that exists can tell what is already known.
      const { known } = await openStores({ ...stores, journal: existing(flags.journal), cache: existing(flags.cache) }, job);
      cleanUp.defer(() => known?.close());
      const report = flags.report === undefined ? undefined : await ReportFile.open(flags.report, { input: inputPath, engine: choice.engine });
      cleanUp.defer(() => report?.discard()); // nothing once it is written
      await runDryRun(input, choice.engine, { ...batching, terminal, stop: interrupts.stop, report }, known, choice.engine === 'api' ? choice : undefined);
      if (interrupts.exitCode() !== undefined) process.exitCode = interrupts.exitCode();
      return;
    }

    const { known, journal } = await openStores(stores, job);
    cleanUp.defer(() => known?.close()); // else the journal's lock file outlives us
    // Every output is proven writable before the first request.
    const summaryFile = flags.summary ? await SummaryFile.open(flags.summary) : undefined;
    const report = flags.report === undefined ? undefined : await ReportFile.open(flags.report, { input: inputPath, engine: choice.engine });
    /** a result in hand and every output flushed: the summary and the report may be written */
    let ended = false;
    cleanUp.defer(() => (!ended || output.gone.aborted ? Promise.all([summaryFile?.discard(), report?.discard()]) : undefined));
    const output = await openOutputs(plan.output, input.header, columns, input.emailColumn);
    let result: RunResult | undefined;
    // A failed write must fail the run (rows would be lost), but not mask an error already on its way (see CleanUp.around).
    cleanUp.defer(async () => {
      // only a complete run replaces an output; an interrupted one fills only an empty place
      const kept = await output.end(result === undefined ? 'failed' : result.complete ? 'complete' : 'partial');
      if (kept.length) notice(`${kept.join(', ')} left as it was: only a complete run replaces an output`);
      ended = result !== undefined;
    });
    if (choice.engine === 'local' && choice.notice) notice(choice.notice);

    const progress = newProgress();
    if (input.bytes) progress.inputBytes = input.bytes;
    // Ctrl-C must also hold back requests the API client has queued (linked to watchInterrupts below).
    const stopSending = new AbortController();
    const validator: Validator =
      choice.engine === 'api'
        ? // loaded only when used: undici alone is a tenth of a second of start-up
          (await import('../engines/api/client.js')).createApiValidator({
            ...apiSettings(choice, flags, say),
            concurrency: flags.concurrency,
            // --verbose: each change of the in-flight limit, with its reason
            ...(flags.verbose ? { onConcurrencyChange: (c: LimitChange) => say(`in flight: limit ${c.from} → ${c.to}: ${c.reason}`) } : {}),
            onRateLimitWait: (until) => (progress.rateLimitWaitUntil = until),
            stop: stopSending.signal,
          })
        : // loaded only when used: its lists cost start-up time an API run need not pay
          (await import('../engines/local/index.js')).createLocalValidator({
            ...localSettings(flags, smtp, notice),
            // the progress line moves while a batch waits on DNS or SMTP
            onChecked: (addresses) => (progress.addressesChecked += addresses),
          });
    cleanUp.defer(() => validator.close());

    reporter = new RunReporter(progress, {
      // --verbose lines would tear through a progress line redrawn in place
      flags: flags.verbose ? { ...terminal, progress: false } : terminal,
      failOn: flags.failOn,
      output: output.label,
      summaryFile: flags.summary,
      reportFile: flags.report,
    });
    await reporter.start();
    cleanUp.defer(() => reporter?.stop());
    const { stop, abandon } = interrupts;
    if (stop.aborted) stopSending.abort(stop.reason);
    stop.addEventListener('abort', () => stopSending.abort(stop.reason), { once: true });

    result = await validateStream({
      input,
      validator,
      writer: output.writer,
      batchSize: flags.batchSize,
      concurrency: batchesInFlight,
      filter: plan.filter,
      onProgress: (p) => Object.assign(progress, p),
      onRow: report?.onRow,
      explainFailures: choice.engine === 'api' ? (f) => failureLines(f, { baseUrlSource: choice.baseUrlSource, journal: flags.journal }) : undefined,
      known,
      // a resumed run starts from the journal's index instead of a second copy of its addresses
      dedupe: new Dedupe({ resumed: journal?.memo }),
      // the reader of the output gone (`| head`) stops the run as Ctrl-C does, quietly
      stop: AbortSignal.any([stop, output.gone]),
      cancel: abandon,
    });
    await cleanUp.run();
    if (output.gone.aborted) return; // the reader went away (`| head`): end quietly

    const { summary } = result;
    const signalled = interrupts.exitCode();
    if ((await summaryFile?.write(summary, result.complete ? 'complete' : 'partial')) === false) {
      notice(`${flags.summary} left as it was: only a complete run replaces an output`);
    }
    if ((await report?.write(summary, { output: output.label }, result.complete ? 'complete' : 'partial')) === false) {
      notice(`${flags.report} left as it was: only a complete run replaces an output`);
    }
    process.exitCode = reporter.finish(summary, result.complete, progress.rowsRead);
    if (signalled !== undefined) {
      say(interruptedAdvice(flags.journal, validator.engine));
      process.exitCode = signalled;
    }
  });
}

/** `path` when it names something that exists (or is `-`, refused later), else undefined. */
function existing(path: string | undefined): string | undefined {
  return path !== undefined && (path === '-' || /^rediss?:\/\//i.test(path) || existsSync(path)) ? path : undefined;
}

/** Whether stdout is redirected to a regular file (`> out.csv`), which may then be the input. */
function stdoutIsFile(): boolean {
  try {
    return fstatSync(1).isFile();
  } catch {
    return false;
  }
}
