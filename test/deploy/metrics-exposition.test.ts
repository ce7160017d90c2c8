import { expect } from 'chai';
import { createDefaultMetricsRegistry, renderMetrics } from '@mgw/common';
import { createMetrics } from '@mgw/contracts';
import { checkMetricsExposition, ownMetricFamilies } from '../support/promtool.js';

type Metrics = ReturnType<typeof createMetrics>;

/** Gives every metric of the catalogue one sample, every label set to a plausible value. */
function sampleEveryMetric(metrics: Metrics): void {
  for (const metric of Object.values(metrics)) {
    if (metric === metrics.registry) continue;
    const m = metric as unknown as {
      labelNames: readonly string[];
      inc?: (labels: Record<string, string>, value?: number) => void;
      set?: (labels: Record<string, string>, value: number) => void;
      observe?: (labels: Record<string, string>, value: number) => void;
    };
    const labels = Object.fromEntries(m.labelNames.map((name) => [name, `sample_${name}`]));
    if (m.observe) m.observe(labels, 0.2);
    else if (m.set) m.set(labels, 1);
    else if (m.inc) m.inc(labels, 1);
  }
}

describe('promtool check metrics on the metric catalogue', () => {
  it('When every metric of createMetrics() has a sample, then promtool finds no problem in the exposition', async () => {
    const metrics = createMetrics();
    sampleEveryMetric(metrics);
    const text = await metrics.registry.metrics();
    const families = (await metrics.registry.getMetricsAsJSON()).length;
    expect(text.match(/^# TYPE /gm)?.length).to.equal(families);
    for (const metric of await metrics.registry.getMetricsAsJSON()) {
      expect(metric.values.length, `${metric.name} has a sample`).to.be.greaterThan(0);
    }
    await checkMetricsExposition(text);
  });

  it('When an exposition breaks the conventions, then checkMetricsExposition throws with promtool output', async () => {
    const bad = '# HELP mgw_bad_requests requests\n# TYPE mgw_bad_requests counter\nmgw_bad_requests 1\n';
    let error: Error | undefined;
    await checkMetricsExposition(bad).catch((err: Error) => (error = err));
    expect(error?.message).to.match(/promtool check metrics .*found problems/);
    expect(error?.message).to.include('mgw_bad_requests');
  });

  it('When a full /metrics page (ours plus Node defaults) is filtered to our families, then it passes promtool', async () => {
    const metrics = createMetrics();
    sampleEveryMetric(metrics);
    const defaults = createDefaultMetricsRegistry();
    const page = await renderMetrics(metrics.registry, defaults);
    const own = ownMetricFamilies(page);
    expect(own).to.equal(await metrics.registry.metrics().then((t) => ownMetricFamilies(t)));
    expect(own).to.not.match(/^(# (HELP|TYPE) )?(nodejs|process)_/m);
    await checkMetricsExposition(own);
    // why the filter exists: prom-client's defaults break promtool's conventions
    let error: Error | undefined;
    await checkMetricsExposition(await defaults.metrics()).catch((err: Error) => (error = err));
    expect(error?.message).to.match(/_total/);
  });
});
