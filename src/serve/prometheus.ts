/**
 * The Prometheus text exposition format (version 0.0.4), what `GET /metrics`
 * answers: counters, gauges and histograms with labels. Written here rather
 * than taken from prom-client, which brought @opentelemetry/api and bintrees
 * into every install for serve's metrics alone; the format is a few lines.
 * https://prometheus.io/docs/instrumenting/exposition_formats/
 */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

type Labels = Readonly<Record<string, string>>;

interface Family {
  /** the family's lines, `# HELP` and `# TYPE` first */
  lines(): string[];
}

export class Registry {
  private readonly families: Family[] = [];

  add<F extends Family>(family: F): F {
    this.families.push(family);
    return family;
  }

  text(): string {
    return this.families.flatMap((f) => f.lines()).join('\n') + '\n';
  }
}

/** A value per label set, kept in the order first seen. */
abstract class Series<V> implements Family {
  protected readonly series = new Map<string, { labels: Labels; value: V }>();

  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly type: 'counter' | 'gauge' | 'histogram',
  ) {}

  protected at(labels: Labels, start: () => V): { labels: Labels; value: V } {
    const key = labelText(labels);
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = { labels, value: start() }));
    return s;
  }

  lines(): string[] {
    const head = [`# HELP ${this.name} ${this.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`, `# TYPE ${this.name} ${this.type}`];
    return [...head, ...[...this.series.values()].flatMap((s) => this.sample(s.labels, s.value))];
  }

  protected abstract sample(labels: Labels, value: V): string[];
}

export class Counter extends Series<number> {
  /** `collect` gives the total when the metrics are read (the process's CPU time) */
  constructor(
    name: string,
    help: string,
    private readonly collect?: () => number,
  ) {
    super(name, help, 'counter');
  }

  override lines(): string[] {
    if (this.collect) this.at({}, () => 0).value = this.collect();
    return super.lines();
  }

  inc(labels: Labels = {}, by = 1): void {
    this.at(labels, () => 0).value += by;
  }

  protected sample(labels: Labels, value: number): string[] {
    return [`${this.name}${labelText(labels)} ${number(value)}`];
  }
}

export class Gauge extends Series<number> {
  /** `collect` gives the value when the metrics are read (the process's memory) */
  constructor(
    name: string,
    help: string,
    private readonly collect?: () => number,
  ) {
    super(name, help, 'gauge');
  }

  set(value: number, labels: Labels = {}): void {
    this.at(labels, () => 0).value = value;
  }

  inc(by = 1, labels: Labels = {}): void {
    this.at(labels, () => 0).value += by;
  }

  override lines(): string[] {
    if (this.collect) this.set(this.collect());
    return super.lines();
  }

  protected sample(labels: Labels, value: number): string[] {
    return [`${this.name}${labelText(labels)} ${number(value)}`];
  }
}

interface Buckets {
  counts: number[];
  sum: number;
  count: number;
}

export class Histogram extends Series<Buckets> {
  constructor(
    name: string,
    help: string,
    private readonly bounds: readonly number[],
  ) {
    super(name, help, 'histogram');
  }

  observe(labels: Labels, value: number): void {
    const h = this.at(labels, () => ({ counts: this.bounds.map(() => 0), sum: 0, count: 0 })).value;
    for (let i = 0; i < this.bounds.length; i++) if (value <= this.bounds[i]!) h.counts[i]!++;
    h.sum += value;
    h.count++;
  }

  protected sample(labels: Labels, h: Buckets): string[] {
    const lines = this.bounds.map((le, i) => `${this.name}_bucket${labelText({ ...labels, le: number(le) })} ${h.counts[i]}`);
    lines.push(`${this.name}_bucket${labelText({ ...labels, le: '+Inf' })} ${h.count}`);
    lines.push(`${this.name}_sum${labelText(labels)} ${number(h.sum)}`, `${this.name}_count${labelText(labels)} ${h.count}`);
    return lines;
  }
}

function labelText(labels: Labels): string {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')}"`);
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

function number(n: number): string {
  return Number.isFinite(n) ? String(n) : n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN';
}
