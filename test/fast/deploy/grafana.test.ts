import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { parse } from 'yaml';
import { exportedSeriesNames, promqlMetricNames } from '../../deploy/helpers/metric-names.js';
import { repoPath } from '../../deploy/helpers/tools.js';

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource?: { type: string; uid: string };
  targets?: Array<{ refId: string; expr: string; datasource?: { uid: string } }>;
  panels?: Panel[];
}
interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: Array<{ name: string; type: string; query: string }> };
}

const DASHBOARD = 'deploy/grafana/dashboards/messenger-gateway.json';

describe('Grafana dashboard and provisioning', () => {
  const dashboard = JSON.parse(readFileSync(repoPath(DASHBOARD), 'utf8')) as Dashboard;
  const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
  const graphs = panels.filter((p) => p.type !== 'row');
  const exprs = graphs.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));

  it('When the dashboard JSON is parsed, then every panel queries Prometheus through the data-source variable', () => {
    expect(dashboard.uid).to.equal('messenger-gateway');
    const variable = dashboard.templating.list.find((v) => v.name === 'datasource');
    expect(variable).to.include({ type: 'datasource', query: 'prometheus' });
    expect(graphs.length).to.be.greaterThan(10);
    expect(new Set(panels.map((p) => p.id)).size, 'unique panel ids').to.equal(panels.length);
    for (const p of graphs) {
      expect(p.datasource?.uid, p.title).to.equal('${datasource}');
      expect(p.targets, p.title).to.be.an('array').that.is.not.empty;
      for (const t of p.targets!) expect(t.expr, `${p.title} ${t.refId}`).to.be.a('string').and.not.empty;
    }
  });

  it('When traces are on, then the latency panels show their exemplars and a Tempo data-source variable opens the traces', () => {
    const tempo = dashboard.templating.list.find((v) => v.name === 'tempo');
    expect(tempo).to.include({ type: 'datasource', query: 'tempo' });
    const latency = graphs.filter((p) =>
      (p.targets ?? []).some((t) =>
        /mgw_(http_request_duration|send_latency|webhook_delivery_latency)_seconds_bucket/.test(t.expr),
      ),
    );
    expect(latency.length).to.be.at.least(3);
    for (const p of latency)
      expect(
        (p.targets as Array<{ expr: string; exemplar?: boolean }>)
          .filter((t) => t.expr.includes('_bucket'))
          .every((t) => t.exemplar),
        p.title,
      ).to.equal(true);
    const links = (dashboard as unknown as { links: Array<{ url: string }> }).links;
    expect(links.some((l) => l.url.includes('${tempo}'))).to.equal(true);
  });

  it('When the panels are laid out, then they fit the 24-column grid without overlapping', () => {
    const cells = new Set<string>();
    for (const p of panels) {
      const { x, y, w, h } = p.gridPos;
      expect(x + w, p.title).to.be.at.most(24);
      for (let i = x; i < x + w; i++)
        for (let j = y; j < y + h; j++) {
          expect(cells.has(`${i},${j}`), `${p.title} overlaps at ${i},${j}`).to.equal(false);
          cells.add(`${i},${j}`);
        }
    }
  });

  it('When the metric names of every query are extracted, then each is one our services export', async () => {
    const exported = await exportedSeriesNames();
    const unknown = exprs.flatMap(({ panel, expr }) =>
      promqlMetricNames(expr)
        .filter((m) => !exported.has(m))
        .map((m) => `${panel}: ${m}`),
    );
    expect(unknown, 'metrics not in the catalogue').to.deep.equal([]);
  });

  it('When the dashboard is read, then it shows requests, errors, latency, queues, sending, outcomes, devices, Redis memory, memory and event-loop lag', () => {
    const used = new Set(exprs.flatMap(({ expr }) => promqlMetricNames(expr)));
    expect([...used]).to.include.members([
      'mgw_http_requests_total',
      'mgw_http_request_duration_seconds_bucket',
      'mgw_queue_jobs',
      'mgw_jobs_enqueued_total',
      'mgw_jobs_completed_total',
      'mgw_jobs_failed_total',
      'mgw_send_latency_seconds_bucket',
      'mgw_messages_total',
      'mgw_device_connection_state',
      'mgw_device_reconnects_total',
      'mgw_leases_held',
      'mgw_devices_linked',
      'mgw_redis_memory_used_bytes',
      'mgw_redis_memory_max_bytes',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_heap_size_used_bytes',
    ]);
  });

  it('When Grafana is provisioned by compose, then the data source and the dashboard folder match the mounts', () => {
    const ds = parse(
      readFileSync(repoPath('deploy/grafana/provisioning/datasources/prometheus.yml'), 'utf8'),
    ) as {
      datasources: Array<{
        type: string;
        uid: string;
        url: string;
        isDefault?: boolean;
        jsonData?: { exemplarTraceIdDestinations?: Array<{ name: string; datasourceUid: string }> };
      }>;
    };
    expect(ds.datasources.map((d) => d.type)).to.deep.equal(['prometheus', 'tempo']);
    expect(ds.datasources[0]).to.include({
      type: 'prometheus',
      url: 'http://prometheus:9090',
      isDefault: true,
    });
    // An exemplar's trace_id (the latency histograms', traces on) opens in the Tempo data source.
    expect(ds.datasources[0]!.jsonData?.exemplarTraceIdDestinations).to.deep.equal([
      { name: 'trace_id', datasourceUid: ds.datasources[1]!.uid },
    ]);
    const providers = parse(
      readFileSync(repoPath('deploy/grafana/provisioning/dashboards/messenger-gateway.yml'), 'utf8'),
    ) as { providers: Array<{ type: string; options: { path: string } }> };
    const compose = parse(readFileSync(repoPath('docker-compose.yml'), 'utf8')) as {
      services: { grafana: { volumes: string[] } };
    };
    const mount = compose.services.grafana.volumes.find((v) => v.startsWith('./deploy/grafana/dashboards:'));
    expect(mount?.split(':')[1]).to.equal(providers.providers[0]!.options.path);
  });
});
