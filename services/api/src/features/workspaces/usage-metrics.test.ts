import { expect } from 'chai';
import { createMetrics } from '@mgw/contracts';
import { USAGE_COUNTS, type UsageDay, type WorkspaceRecord } from '@mgw/store';
import { WORKSPACE_METRICS_TOP, WorkspaceUsageGauge } from './usage-metrics.js';

/** The usage gauge's labels stay bounded however many workspaces there are (the store faked). */
describe("Workspaces: today's usage as a gauge, the top workspaces named and the rest summed", () => {
  const workspaceCount = WORKSPACE_METRICS_TOP + 15;
  const ids = Array.from({ length: workspaceCount }, (_, i) => `ws${String(i).padStart(3, '0')}`);
  const today = (accepted: number): UsageDay => {
    const d = { day: '2026-11-28', failedByReason: {} } as UsageDay;
    for (const c of USAGE_COUNTS) d[c] = 0;
    return { ...d, accepted, sent: accepted * 2 };
  };
  let reads = 0;
  const deps = (metrics = createMetrics()) => ({
    metrics,
    workspaces: {
      list: () => Promise.resolve(ids.map((id) => ({ id }) as WorkspaceRecord)),
    },
    usage: {
      days: (id: string) => {
        reads++;
        return Promise.resolve([today(Number(id.slice(2)))]);
      },
    },
  });
  const series = async (metrics: ReturnType<typeof createMetrics>) =>
    (await metrics.workspaceUsageToday.get()).values.map((v) => ({ ...v.labels, value: v.value }));

  it('When there are more workspaces than the top, then the busiest are named, the rest summed as _other, and the series stay bounded', async () => {
    const d = deps();
    await new WorkspaceUsageGauge(d).collect(Date.parse('2026-11-28T12:00:00Z'));
    const all = await series(d.metrics);
    const named = new Set(all.map((s) => s.workspace));
    expect(named.size).to.equal(WORKSPACE_METRICS_TOP + 1);
    expect(all).to.have.length((WORKSPACE_METRICS_TOP + 1) * USAGE_COUNTS.length);
    // The busiest accepted the most: ws034 down to ws015 are named, ws000..ws014 are the rest.
    expect(named.has(ids.at(-1)!)).to.equal(true);
    expect(named.has('ws014')).to.equal(false);
    const rest = Array.from({ length: 15 }, (_, i) => i).reduce((a, b) => a + b, 0);
    expect(all.find((s) => s.workspace === '_other' && s.count === 'accepted')?.value).to.equal(rest);
    expect(all.find((s) => s.workspace === '_other' && s.count === 'sent')?.value).to.equal(rest * 2);
    expect(all.find((s) => s.workspace === 'ws034' && s.count === 'accepted')?.value).to.equal(34);
  });

  it('When scrapes come more often than once a minute, then Redis is read once; a minute later, again', async () => {
    const gauge = new WorkspaceUsageGauge(deps());
    const start = Date.parse('2026-11-28T12:00:00Z');
    reads = 0;
    await Promise.all([gauge.collect(start), gauge.collect(start)]);
    await gauge.collect(start + 30_000);
    expect(reads).to.equal(workspaceCount);
    await gauge.collect(start + 61_000);
    expect(reads).to.equal(2 * workspaceCount);
  });

  it('When there are no more workspaces than the top, then there is no _other series', async () => {
    const d = deps();
    ids.splice(3);
    await new WorkspaceUsageGauge(d).collect(Date.parse('2026-11-28T12:00:00Z'));
    const all = await series(d.metrics);
    expect(new Set(all.map((s) => s.workspace))).to.deep.equal(new Set(['ws000', 'ws001', 'ws002']));
  });
});
