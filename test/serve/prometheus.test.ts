import { describe, expect, it } from 'vitest';
import { Counter, Gauge, Histogram, Registry } from '../../src/serve/prometheus.js';

describe('the Prometheus text format', () => {
  it('writes counters, gauges and cumulative histogram buckets as Prometheus reads them', () => {
    const r = new Registry();
    const c = r.add(new Counter('x_total', 'Things\nseen'));
    const g = r.add(new Gauge('x_open', 'Open now'));
    const h = r.add(new Histogram('x_seconds', 'How long', [0.1, 1]));
    c.inc({ route: 'a"b\\c\nd' });
    c.inc({ route: 'a"b\\c\nd' }, 2);
    g.set(3);
    h.observe({ route: 'r' }, 0.05);
    h.observe({ route: 'r' }, 0.5);
    h.observe({ route: 'r' }, 5);
    expect(r.text()).toBe(
      [
        '# HELP x_total Things\\nseen',
        '# TYPE x_total counter',
        'x_total{route="a\\"b\\\\c\\nd"} 3',
        '# HELP x_open Open now',
        '# TYPE x_open gauge',
        'x_open 3',
        '# HELP x_seconds How long',
        '# TYPE x_seconds histogram',
        'x_seconds_bucket{route="r",le="0.1"} 1',
        'x_seconds_bucket{route="r",le="1"} 2',
        'x_seconds_bucket{route="r",le="+Inf"} 3',
        'x_seconds_sum{route="r"} 5.55',
        'x_seconds_count{route="r"} 3',
        '',
      ].join('\n'),
    );
  });

  it('reads a collected figure when the metrics are read', () => {
    const r = new Registry();
    let cpu = 1;
    r.add(new Counter('cpu_seconds_total', 'CPU', () => cpu));
    expect(r.text()).toContain('\ncpu_seconds_total 1\n');
    cpu = 2.5;
    expect(r.text()).toContain('\ncpu_seconds_total 2.5\n');
  });
});
