import { addressKey } from '../batch/address-key.js';
import { VerdictMemo } from '../batch/verdict-memo.js';
import { OrderBuffer, type Slot } from '../order/order-buffer.js';
import { newProgress, type Progress } from '../progress.js';
import type { Input } from '../read/input-row.js';
import { precheck } from '../read/precheck.js';
import { emptySummary, type Summary } from '../summary.js';
import type { Validator } from '../validate/validator.js';
import { errorVerdict, type Status, type Verdict } from '../verdict.js';
import type { RowWriter } from '../write/row-writer.js';
import type { KnownVerdicts } from './known-verdicts.js';
import { precheckVerdict } from './precheck-verdict.js';

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

  const memo = new VerdictMemo();
  /** addresses sent and not yet answered → the rows waiting for them */
  const waiting = new Map<string, Slot | Slot[]>();
  const order = new OrderBuffer();
  const inFlight = new Set<Promise<void>>();
  const maxBuffered = (concurrency + 2) * batchSize;
  let batch: string[] = [];
  let fatal: unknown;

  const emit = (slot: Slot): void => {
    const v = slot.verdict!;
    summary.total++;
    summary[v.status]++;
    if (v.error) summary.errors++;
    progress.rowsWritten++;
    if (options.only && !options.only.has(v.status)) return;
    summary.written++;
    writer.row(slot.fields, v);
  };

  const settle = async (emails: readonly string[], verdicts: Verdict[]): Promise<void> => {
    if (known) {
      const fresh = verdicts.filter((v) => !v.error);
      if (fresh.length) await known.record(fresh);
    }
    // Validators answer under the address as asked (see Validator), usually in
    // the order asked: take that fast path, and look up the rest.
    let byEmail: Map<string, Verdict> | undefined;
    for (let i = 0; i < emails.length; i++) {
      const email = emails[i]!;
      let v = verdicts[i];
      if (v?.email !== email) {
        byEmail ??= new Map(verdicts.map((x) => [x.email, x]));
        v = byEmail.get(email) ?? errorVerdict(email, 'MISSING_RESULT', 'the engine gave no verdict');
      }
      resolve(addressKey(email), v);
    }
  };

  const resolve = (key: string, v: Verdict): void => {
    memo.set(key, v);
    progress.addressesDone++;
    const w = waiting.get(key);
    waiting.delete(key);
    if (w === undefined) return;
    if (Array.isArray(w)) for (const slot of w) answer(slot, v);
    else answer(w, v);
  };

  // Each row gets the verdict under its own spelling of the address.
  const answer = (slot: Slot, v: Verdict): void => {
    slot.verdict = slot.email === v.email ? v : { ...v, email: slot.email };
  };

  const dispatch = async (): Promise<void> => {
    if (batch.length === 0) return;
    const emails = batch;
    batch = [];
    while (inFlight.size >= concurrency) await Promise.race(inFlight);
    // Stopped while waiting for a free slot: this batch is never sent, its rows never written.
    if (stop.aborted) return;
    const job = validator
      .validate(emails, cancel)
      .then((verdicts) => settle(emails, verdicts))
      .catch((err: unknown) => {
        // Abandoned after an interruption: its rows stay unwritten, which is no failure.
        if (cancel.aborted) return;
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
    reading: for await (const rows of input.rows) {
      for (const row of rows) {
      if (stop.aborted || fatal !== undefined || options.outputGone?.()) break reading;
      progress.rowsRead++;
      const reason = precheck(row.email);
      if (reason !== undefined) {
        summary.prechecked++;
        order.push(row.fields, row.email, precheckVerdict(row.email, reason));
      } else {
        const key = addressKey(row.email);
        const done = memo.get(key, row.email);
        const pending = waiting.get(key);
        if (done) {
          summary.duplicates++;
          order.push(row.fields, row.email, done);
        } else if (pending) {
          summary.duplicates++;
          const slot = order.push(row.fields, row.email);
          if (Array.isArray(pending)) pending.push(slot);
          else waiting.set(key, [pending, slot]);
        } else {
          const reused = known?.get(row.email);
          if (reused) {
            if (reused.source === 'journal') summary.fromJournal++;
            else summary.fromCache++;
            memo.set(key, reused.verdict);
            progress.addressesDone++;
            answer(order.push(row.fields, row.email), reused.verdict);
          } else {
            waiting.set(key, order.push(row.fields, row.email));
            progress.addressesQueued++;
            batch.push(row.email);
            if (batch.length >= batchSize) await dispatch();
          }
        }
      }
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
    if (s.disposableListVersion) summary.disposableListVersion = s.disposableListVersion;
    if (s.warnings?.length) summary.warnings = s.warnings;
    summary.elapsedMs = Date.now() - started;
  }
  const complete = order.size === 0 && progress.inputDone;
  await writer.end(summary);
  return { summary, complete };
}
