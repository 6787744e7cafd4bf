import { addressKey } from '../dedupe/address-key.js';
import { Dedupe } from '../dedupe/dedupe.js';
import { OrderBuffer } from '../order/order-buffer.js';
import { newProgress, type Progress } from '../progress.js';
import type { Input, InputRow } from '../read/input-row.js';
import { precheck } from '../read/precheck.js';
import { emptySummary, type Summary } from '../summary.js';
import type { Validator } from '../validate/validator.js';
import { errorVerdict, type Status, type Verdict } from '../verdict.js';
import type { RowWriter } from '../write/row-writer.js';
import type { KnownVerdicts } from './known-verdicts.js';
import { withIdle } from './idle.js';
import { precheckVerdict } from './precheck-verdict.js';

/** Input that pauses this long gets its partial batch sent (see withIdle). */
const IDLE_FLUSH_MS = 250;

export interface ValidateStreamOptions {
  input: Input;
  validator: Validator;
  writer: RowWriter;
  /** distinct addresses per engine call, 1..1000 */
  batchSize: number;
  /** engine calls in flight at most */
  concurrency: number;
  /** write only rows with these statuses (--only) */
  only?: ReadonlySet<Status>;
  known?: KnownVerdicts;
  /** the deduplication of this run (a test injects one whose hash collides) */
  dedupe?: Dedupe;
  /** aborted: stop reading and dispatching; answers in flight are still taken */
  stop?: AbortSignal;
  /** aborted: give up on requests in flight too */
  cancel?: AbortSignal;
  progress?: Progress;
  /** true when the reader of the output has gone away (`| head`) */
  outputGone?: () => boolean;
}

export interface RunResult {
  summary: Summary;
  /** false when the run stopped before every row was written */
  complete: boolean;
}

/** Distinct addresses on their way to the engine, with where their answers go. */
interface Batch {
  emails: string[];
  /** the first row of each address, by sequence number */
  rows: number[];
  keys: string[];
  /** each address's ticket (see Dedupe.take) */
  tickets: number[];
}

/**
 * The pipeline: read → precheck and dedupe → batch → validate → restore order →
 * write. Memory is bounded by the batches in flight: reading pauses while the
 * order buffer holds more than those batches' rows.
 */
export async function validateStream(options: ValidateStreamOptions): Promise<RunResult> {
  const { input, validator, writer, batchSize, concurrency, known } = options;
  const progress = options.progress ?? newProgress();
  const stop = options.stop ?? new AbortController().signal;
  const cancel = options.cancel ?? new AbortController().signal;
  const summary = emptySummary(validator.engine);
  const started = Date.now();

  const dedupe = options.dedupe ?? new Dedupe({ journal: known?.memo });
  const order = new OrderBuffer();
  const inFlight = new Set<Promise<void>>();
  const maxBuffered = (concurrency + 2) * batchSize;
  const newBatch = (): Batch => ({ emails: [], rows: [], keys: [], tickets: [] });
  let batch = newBatch();
  let fatal: unknown;
  /** true while the input pauses (see withIdle) */
  let inputIdle = false;

  const emit = (row: InputRow, v: Verdict): void => {
    summary.total++;
    summary[v.status]++;
    if (v.error) summary.errors++;
    progress.rowsWritten++;
    if (options.only && !options.only.has(v.status)) return;
    summary.written++;
    writer.row(row.fields, v);
  };

  // Each row gets the verdict under its own spelling of the address.
  const answer = (seq: number, v: Verdict): void => {
    const email = order.rowAt(seq).email;
    order.answer(seq, email === v.email ? v : { ...v, email });
  };

  const settle = async (b: Batch, verdicts: Verdict[]): Promise<void> => {
    if (known) {
      const fresh = verdicts.filter((v) => !v.error);
      if (fresh.length) await known.record(fresh);
    }
    // Validators answer under the address as asked (see Validator), usually in
    // the order asked: take that fast path, and look up the rest.
    let byEmail: Map<string, Verdict> | undefined;
    for (let i = 0; i < b.emails.length; i++) {
      const email = b.emails[i]!;
      let v = verdicts[i];
      if (v?.email !== email) {
        byEmail ??= new Map(verdicts.map((x) => [x.email, x]));
        v = byEmail.get(email) ?? errorVerdict(email, 'MISSING_RESULT', 'the engine gave no verdict');
      }
      progress.addressesDone++;
      // the first row holds `email` itself, which v.email was just compared with
      order.answer(b.rows[i]!, v);
      for (const seq of dedupe.settle(b.tickets[i]!, b.keys[i]!, v)) answer(seq, v);
    }
    // Written at once, not when the reader next looks up: rows and verdicts
    // held longer would outlive the young generation and cost a full GC.
    order.release(emit);
    // While the input pauses, nothing else would pass these rows on.
    if (inputIdle) await writer.drain(true);
  };

  /**
   * Routes one row: a verdict now (precheck, duplicate, journal/cache) or into
   * the batch.
   */
  const take = (row: InputRow): void => {
    const email = row.email;
    progress.rowsRead++;
    if (precheck(email) !== undefined) {
      summary.prechecked++;
      order.push(row, precheckVerdict(email));
      return;
    }
    const key = addressKey(email);
    const seq = order.push(row);
    const found = dedupe.take(key, email, seq);
    if (found === 'wait') {
      summary.duplicates++;
      return;
    }
    if (typeof found !== 'number') {
      if ('reused' in found) {
        summary.fromJournal++;
        // counted as queued and done at once, so progress never passes 100%
        progress.addressesQueued++;
        progress.addressesDone++;
        order.answer(seq, found.reused);
        return;
      }
      summary.duplicates++;
      order.answer(seq, found);
      return;
    }
    const reused = known?.get(email);
    if (reused) {
      if (reused.source === 'journal') summary.fromJournal++;
      else summary.fromCache++;
      dedupe.settle(found, key, reused.verdict);
      // counted as queued and done at once, so progress never passes 100%
      progress.addressesQueued++;
      progress.addressesDone++;
      answer(seq, reused.verdict);
      return;
    }
    progress.addressesQueued++;
    batch.emails.push(email);
    batch.rows.push(seq);
    batch.keys.push(key);
    batch.tickets.push(found);
  };

  const dispatch = async (): Promise<void> => {
    if (batch.emails.length === 0) return;
    const b = batch;
    batch = newBatch();
    while (inFlight.size >= concurrency) await Promise.race(inFlight);
    // Stopped, or failed, while waiting for a free slot: this batch is never
    // sent (nor paid for), its rows never written.
    if (stop.aborted || fatal !== undefined) return;
    const job = validator
      .validate(b.emails, cancel)
      .then((verdicts) => settle(b, verdicts))
      .catch((err: unknown) => {
        // Stopped before it was sent, or abandoned in flight, after an interruption:
        // its rows stay unwritten, which is no failure.
        if (cancel.aborted || stop.aborted) return;
        fatal ??= err;
      })
      .finally(() => inFlight.delete(job));
    inFlight.add(job);
  };

  const release = async (): Promise<void> => {
    order.release(emit);
    await writer.drain();
  };

  try {
    await writer.begin();
    const flushWhenIdle = async (): Promise<void> => {
      inputIdle = true;
      if (!stop.aborted && fatal === undefined) await dispatch();
      order.release(emit);
      await writer.drain(true);
    };
    reading: for await (const rows of withIdle(input.rows, IDLE_FLUSH_MS, flushWhenIdle, stop)) {
      inputIdle = false;
      for (const row of rows) {
        if (stop.aborted || fatal !== undefined || options.outputGone?.()) break reading;
        take(row);
        if (batch.emails.length >= batchSize) await dispatch();
      }
      await release();
      // Backpressure: hold reading while the rows waiting exceed the batches in flight.
      while (order.size > maxBuffered && fatal === undefined && !stop.aborted) {
        if (inFlight.size === 0) await dispatch();
        if (inFlight.size === 0) break;
        await Promise.race(inFlight);
        await release();
      }
    }
    if (!stop.aborted && fatal === undefined && !options.outputGone?.()) {
      progress.inputDone = true;
      await dispatch();
    }
    while (inFlight.size) {
      await Promise.race(inFlight);
      await release();
    }
    if (fatal !== undefined) throw fatal;
    await release();
  } finally {
    const s = validator.stats();
    summary.requests = s.requests;
    summary.retries = s.retries;
    summary.rateLimited = s.rateLimited;
    if (s.rateLimitWaits !== undefined) summary.rateLimitWaits = s.rateLimitWaits;
    if (s.disposableListVersion) summary.disposableListVersion = s.disposableListVersion;
    if (s.warnings?.length) summary.warnings = s.warnings;
    if (s.smtp) summary.smtp = { ...s.smtp };
    summary.elapsedMs = Date.now() - started;
  }
  const complete = order.size === 0 && progress.inputDone;
  await writer.end(summary);
  return { summary, complete };
}
