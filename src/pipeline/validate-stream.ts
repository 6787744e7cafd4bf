import { addressKey } from '../codec/address-key.js';
import { Dedupe } from '../dedupe/dedupe.js';
import { OrderBuffer } from './order-buffer.js';
import type { Input, InputRow } from '../read/input-row.js';
import { precheck, precheckVerdict } from './precheck.js';
import type { Summary } from '../summary.js';
import type { BatchWindow, Validator } from '../engines/validator.js';
import { errorVerdict, type Verdict } from '../verdict.js';
import type { CheckedCell, RowWriter } from '../write/row-writer.js';
import type { KnownVerdicts } from '../stores/known-verdicts.js';
import { withIdle } from './idle.js';
import { Tally, type RunEnd, type RunProgress } from './tally.js';
import type { RowFilter } from '../write/row-filter.js';
import { reasonOf, type Reason } from '../reason.js';
import { cellVerdicts } from './row-verdict.js';
import type { Clock } from '../time/clock.js';

export type { RunProgress } from './tally.js';

/** rows whose address keys are looked up together (see keysAhead) */
const AHEAD = 64;

/** Input that pauses this long gets its partial batch sent (see withIdle). */
const IDLE_FLUSH_MS = 250;

export interface ValidateStreamOptions {
  input: Input;
  validator: Validator;
  writer: RowWriter;
  /** distinct addresses per engine call, 1..1000 */
  batchSize: number;
  /**
   * engine calls in flight at most: a number, or a window asked again before
   * each call (batchesInFlight: the API client's limit as it moves)
   */
  concurrency: number | BatchWindow;
  /** which rows are written (--only, --except, --unique); all rows are counted */
  filter?: RowFilter;
  known?: KnownVerdicts;
  /** the deduplication of this run: one resumed from a journal, or (tests) one whose hash collides */
  dedupe?: Dedupe;
  /**
   * aborted (Ctrl-C, or the reader of the output gone): stop reading and
   * dispatching; answers in flight are still taken
   */
  stop?: AbortSignal;
  /** aborted: give up on requests in flight too */
  cancel?: AbortSignal;
  /** told the run's counters after each step (a chunk read, a batch answered): the CLI's progress line */
  onProgress?: (progress: Readonly<RunProgress>) => void;
  /** how the summary words the engine's failures (the CLI's advice names its flags) */
  explainFailures?: RunEnd['explainFailures'];
  /** told every row's verdict as the row leaves in input order, before --only, --except and --unique filter (what --report counts) */
  onRow?: (verdict: Verdict, reason: Reason | '') => void;
  /** what the run's elapsed time and the idle flush are timed on (io.clock; the real one by default) */
  clock?: Clock;
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
  /** the addresses in it so far: the arrays are filled up to here */
  size: number;
}

/**
 * A batch's arrays are made at the batch's size and filled in place. Pushed
 * to, each grew eight times on its way to 1000 addresses, a copy each time:
 * 110 MB of the 1.3 GB a run of the bench's 1M addresses allocates, four
 * arrays a batch.
 */
const newBatch = (capacity: number): Batch => ({
  emails: new Array<string>(capacity),
  rows: new Array<number>(capacity),
  keys: new Array<string>(capacity),
  tickets: new Array<number>(capacity),
  size: 0,
});

/**
 * A row with several addresses to check (InputRow.cells) while their
 * verdicts come in. Each address goes its own way (precheck, dedupe, the
 * journal, a batch) under an id of its own, a negative number, where a row
 * goes under its sequence number; the row is answered when the last comes.
 */
interface PartRow {
  seq: number;
  row: InputRow;
  /** the addresses of every checked cell, flat, in order */
  emails: string[];
  verdicts: Verdict[];
  /** addresses without a verdict yet, plus one while they are being routed */
  pending: number;
}

/**
 * The pipeline: read → precheck and dedupe → batch → validate → restore order →
 * write. Memory is bounded by the batches in flight: reading pauses while a
 * batch waits for a free place among those allowed now, and while the order
 * buffer holds more rows than the most batches in flight the run allows and
 * two more. The first bound holds a run whose answers come in order; the
 * second, while an early batch holds the order up (a retry's wait), the
 * later batches' rows piling up behind it, so the engine stays busy through it.
 */
export function validateStream(options: ValidateStreamOptions): Promise<RunResult> {
  return new Pipeline(options).run();
}

class Pipeline {
  private readonly tally: Tally;
  private readonly dedupe: Dedupe;
  private readonly order = new OrderBuffer();
  private readonly inFlight = new Set<Promise<void>>();
  /** the batches in flight allowed (see ValidateStreamOptions.concurrency) */
  private readonly window: BatchWindow;
  private batch: Batch;
  private fatal: unknown;
  /** true while the input pauses (see withIdle) */
  private inputIdle = false;
  private readonly stop: AbortSignal;
  private readonly cancel: AbortSignal;
  private readonly filter: RowFilter;
  /** --unique: the later rows of each address, marked as they are routed (a set of rows, not of addresses) */
  private readonly duplicates = new WeakSet<InputRow>();
  /**
   * Frees the place of each call in flight: called when its answer has been
   * taken, or when `cancel` aborts — so a call that never settles cannot hold
   * the run. (One listener on `cancel` for the run, not one per call.)
   */
  private readonly giveUp = new Set<() => void>();
  /** the addresses of rows with several, by their ids (see PartRow): the row, and which address */
  private readonly parts = new Map<number, { row: PartRow; index: number }>();
  private nextPart = -1;
  /** each checked cell's verdict, for rows with several addresses, until the row is written */
  private readonly cellResults = new WeakMap<InputRow, CheckedCell[]>();

  constructor(private readonly options: ValidateStreamOptions) {
    this.tally = new Tally(options.validator.engine, options.filter?.unique, options.clock);
    this.batch = newBatch(options.batchSize);
    const { concurrency } = options;
    this.window = typeof concurrency === 'number' ? { now: () => concurrency, most: concurrency } : concurrency;
    const { header, columnChoice: choice } = options.input;
    if (choice) this.tally.counts.columns = choice.columns.map((c) => ({ name: header[c] ?? '', number: c + 1, by: choice.by }));
    this.filter = options.filter ?? {};
    this.dedupe = options.dedupe ?? new Dedupe();
    this.stop = options.stop ?? new AbortController().signal;
    this.cancel = options.cancel ?? new AbortController().signal;
    this.cancel.addEventListener(
      'abort',
      () => {
        for (const free of this.giveUp) free();
      },
      { once: true },
    );
    const signalled = (): void => void (this.signalled = true);
    this.stop.addEventListener('abort', signalled, { once: true });
    this.cancel.addEventListener('abort', signalled, { once: true });
    this.signalled = this.stop.aborted || this.cancel.aborted;
  }

  /**
   * `stop` or `cancel` aborted, kept as a field: the loop asks once a row, and
   * reading a signal's `aborted` twice a row showed as 0.17 s at 1M rows in a
   * profile on a loaded machine.
   */
  private signalled = false;

  /** The one stop condition: interrupted, the reader gone, or a batch failed. */
  private get halted(): boolean {
    return this.signalled || this.fatal !== undefined;
  }

  async run(): Promise<RunResult> {
    const { input, writer, batchSize } = this.options;
    const maxBuffered = (this.window.most + 2) * batchSize;
    await writer.begin();
    reading: for await (const rows of withIdle(input.rows, IDLE_FLUSH_MS, () => this.flushWhenIdle(), this.stop, this.options.clock)) {
      this.inputIdle = false;
      for (let i = 0; i < rows.length; i += AHEAD) {
        const end = Math.min(rows.length, i + AHEAD);
        const keys = this.keysAhead(rows, i, end);
        for (let j = i; j < end; j++) {
          if (this.halted) break reading;
          this.route(rows[j]!, keys[j - i]);
          if (this.batch.size >= batchSize) await this.dispatch();
        }
      }
      await this.release();
      // Backpressure: hold reading while the rows waiting exceed the batches in flight.
      while (this.order.size > maxBuffered && !this.halted) {
        if (this.inFlight.size === 0) await this.dispatch();
        if (this.inFlight.size === 0) break;
        await this.nextAnswer();
      }
    }
    if (!this.halted) {
      this.tally.inputDone = true;
      await this.dispatch();
    }
    while (this.inFlight.size && !this.cancel.aborted) await this.nextAnswer();
    if (this.fatal !== undefined) throw this.fatal;
    await this.release();
    const complete = this.order.size === 0 && this.tally.inputDone;
    const summary = this.tally.summary(this.options.validator.stats(), {
      interrupted: this.stop.aborted && !complete,
      explainFailures: this.options.explainFailures,
    });
    await writer.end(summary);
    return { summary, complete };
  }

  /** the address keys of the rows being routed (see keysAhead) */
  private readonly ahead: (string | undefined)[] = [];

  /**
   * The address keys of rows[from..to) that have one address, told to the
   * dedupe before they are routed, so that their look-ups overlap (see
   * VerdictMemo.expect: 1M distinct addresses, 0.04-0.05 s of CPU in the
   * memo alone).
   */
  private keysAhead(rows: readonly InputRow[], from: number, to: number): readonly (string | undefined)[] {
    const keys = this.ahead;
    keys.length = to - from;
    for (let j = from; j < to; j++) {
      const row = rows[j]!;
      keys[j - from] = row.cells === undefined ? addressKey(row.email) : undefined;
    }
    this.dedupe.expect(keys);
    return keys;
  }

  /** Routes one row: a verdict now (precheck, duplicate, journal/cache) or into the batch; `key`: its address's key, if taken already. */
  private route(row: InputRow, key?: string): void {
    const { tally, order } = this;
    tally.rowsRead++;
    if (row.cells !== undefined) return this.routeParts(row, row.cells);
    const email = row.email;
    if (precheck(email) !== undefined) {
      if (email === '') tally.counts.empty++;
      else tally.counts.prechecked++;
      order.push(row, precheckVerdict(email));
      return;
    }
    const seq = order.push(row);
    if (this.routeAddress(email, seq, key)) this.duplicate(row);
  }

  /**
   * Sends one address on its way for `seq` (a row, or an address of one:
   * see PartRow): a verdict now (a duplicate, the journal, the cache) or into
   * the batch. True when it repeats an address seen earlier in the run.
   */
  private routeAddress(email: string, seq: number, key = addressKey(email)): boolean {
    const { tally } = this;
    const found = this.dedupe.take(key, email, seq);
    if (found === 'wait') return true;
    if (typeof found === 'number') {
      const reused = this.options.known?.get(email);
      if (reused) {
        tally.reused(reused.source);
        this.dedupe.settle(found, key, reused.verdict);
        this.answer(seq, reused.verdict);
        return false;
      }
      tally.addressesQueued++;
      const b = this.batch;
      // past the batch's size only for a row of several addresses, before the batch is sent
      const n = b.size++;
      b.emails[n] = email;
      b.rows[n] = seq;
      b.keys[n] = key;
      b.tickets[n] = found;
      return false;
    }
    if ('reused' in found) {
      tally.reused('journal');
      this.fill(seq, found.reused);
      return false;
    }
    this.fill(seq, found);
    return true;
  }

  /**
   * A row with several addresses: each is routed as a row's would be, and
   * the row is a duplicate when every one of them is. Each address is sent
   * and paid for once in the run, whichever row or column it is in.
   */
  private routeParts(row: InputRow, cells: readonly (readonly string[])[]): void {
    const emails = cells.flat();
    const p: PartRow = { seq: this.order.push(row), row, emails, verdicts: new Array<Verdict>(emails.length), pending: emails.length + 1 };
    let repeated = 0;
    for (let i = 0; i < emails.length; i++) {
      const id = this.nextPart--;
      this.parts.set(id, { row: p, index: i });
      const email = emails[i]!;
      if (precheck(email) !== undefined) this.fill(id, precheckVerdict(email));
      else if (this.routeAddress(email, id)) repeated++;
    }
    if (emails.length > 0 && repeated === emails.length) this.duplicate(row);
    this.partDone(p);
  }

  /** One fewer address of `p` to wait for; the last one answers the row. */
  private partDone(p: PartRow): void {
    if (--p.pending > 0) return;
    const { row, cells } = cellVerdicts(p.row.cells!, p.verdicts);
    const reason = reasonOf(row);
    if (reason === 'empty') this.tally.counts.empty++;
    else if (row.provider === 'precheck') this.tally.counts.prechecked++;
    this.cellResults.set(p.row, cells);
    this.order.answer(p.seq, row);
  }

  private duplicate(row: InputRow): void {
    this.tally.counts.duplicates++;
    if (this.filter.unique) this.duplicates.add(row);
  }

  /** Each row gets the verdict under its own spelling of the address. */
  private answer(seq: number, v: Verdict): void {
    const email = seq >= 0 ? this.order.rowAt(seq).email : this.partEmail(seq);
    this.fill(seq, email === v.email ? v : { ...v, email });
  }

  /** The verdict of `seq`, a row's or an address's of a row with several (see PartRow), as it is. */
  private fill(seq: number, v: Verdict): void {
    if (seq >= 0) {
      this.order.answer(seq, v);
      return;
    }
    const part = this.parts.get(seq)!;
    this.parts.delete(seq);
    part.row.verdicts[part.index] = v;
    this.partDone(part.row);
  }

  private partEmail(id: number): string {
    const part = this.parts.get(id)!;
    return part.row.emails[part.index]!;
  }

  private async dispatch(): Promise<void> {
    if (this.batch.size === 0) return;
    const b = this.batch;
    this.batch = newBatch(this.options.batchSize);
    // the addresses the engine is given: no empty place after them
    b.emails.length = b.size;
    // asked again at each answer: the API client's limit moves with its answers
    while (this.inFlight.size >= this.window.now() && !this.cancel.aborted) await Promise.race(this.inFlight);
    // Stopped, or failed, while waiting for a free slot: this batch is never
    // sent (nor paid for), its rows never written.
    if (this.halted) return;
    const answered = this.options.validator
      .validate(b.emails, this.cancel)
      .then((verdicts) => this.settle(b, verdicts))
      .catch((err: unknown) => {
        // Stopped before it was sent, or abandoned in flight, after an interruption:
        // its rows stay unwritten, which is no failure.
        if (this.cancel.aborted || this.stop.aborted) return;
        this.fatal ??= err;
      });
    let free!: () => void;
    const job: Promise<void> = new Promise<void>((resolve) => {
      free = resolve;
      void answered.then(resolve);
    }).finally(() => {
      this.giveUp.delete(free);
      this.inFlight.delete(job);
    });
    this.giveUp.add(free);
    this.inFlight.add(job);
  }

  private async settle(b: Batch, verdicts: Verdict[]): Promise<void> {
    const { known } = this.options;
    // each store keeps what is final for it (keptBy in reason.ts): what is not, a re-run asks again
    if (known) await known.record(verdicts);
    // Given up on (see `cancel`): recorded above if it came, but no longer written — the run has ended.
    if (this.cancel.aborted) return;
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
      this.tally.addressesDone++;
      // the first row holds `email` itself, which v.email was just compared with
      this.fill(b.rows[i]!, v);
      for (const seq of this.dedupe.settle(b.tickets[i]!, b.keys[i]!, v)) this.answer(seq, v);
    }
    // Written at once, not when the reader next looks up: rows and verdicts
    // held longer would outlive the young generation and cost a full GC.
    this.write();
    // Passed on now while the input pauses (nothing else would), else once there
    // are enough: the read loop may be waiting for a free slot, not draining; a
    // pipe's reader gets them at once (Sink's `live`), and its leaving is seen here.
    await this.options.writer.drain(this.inputIdle);
  }

  /** Hands the rows answered, in order, to the writer (those --only keeps), and reports progress. */
  private write(): void {
    this.order.release(this.emit);
    this.options.onProgress?.(this.tally.progress(this.order.answered));
  }

  private readonly emit = (row: InputRow, v: Verdict): void => {
    // once a row: the tally, the filter and the report all need it
    const reason = reasonOf(v);
    this.options.onRow?.(v, reason);
    const duplicate = this.filter.unique === true && this.duplicates.has(row);
    if (!this.tally.written(v, reason, this.filter, duplicate)) return;
    if (row.cells === undefined) this.options.writer.row(row.fields, v, reason);
    else this.options.writer.row(row.fields, v, reason, this.cellResults.get(row));
  };

  private async release(): Promise<void> {
    this.write();
    await this.options.writer.drain();
  }

  private async nextAnswer(): Promise<void> {
    await Promise.race(this.inFlight);
    await this.release();
  }

  private async flushWhenIdle(): Promise<void> {
    this.inputIdle = true;
    if (!this.halted) await this.dispatch();
    this.write();
    await this.options.writer.drain(true);
  }
}
