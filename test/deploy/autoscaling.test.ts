import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { parse, stringify } from 'yaml';
import { loadSenderConfig } from '@mgw/sender/config';
import { validateObject } from './helpers/k8s-models.js';
import { renderKustomize, type K8sObject } from './helpers/kustomize.js';
import { exportedSeriesNames, promqlMetricNames } from './helpers/metric-names.js';
import { repoPath, runTool } from './helpers/tools.js';

// ---- the parts of the schemas these assertions read ----
interface ScalingPolicy {
  type: 'Pods' | 'Percent';
  value: number;
  periodSeconds: number;
}
interface ScalingRules {
  stabilizationWindowSeconds?: number;
  selectPolicy?: string;
  policies?: ScalingPolicy[];
}
interface MetricSpec {
  type: 'External' | 'Pods' | 'Resource' | 'Object';
  external?: {
    metric: { name: string; selector?: { matchLabels?: Record<string, string> } };
    target: { type: string; averageValue?: string | number; value?: string | number };
  };
  pods?: { metric: { name: string } };
}
interface HpaSpec {
  scaleTargetRef: { apiVersion: string; kind: string; name: string };
  minReplicas: number;
  maxReplicas: number;
  metrics: MetricSpec[];
  behavior?: { scaleUp?: ScalingRules; scaleDown?: ScalingRules };
}
interface AdapterRule {
  seriesQuery: string;
  metricsQuery: string;
  resources?: { overrides?: Record<string, { resource: string }>; namespaced?: boolean };
  name?: { matches?: string; as?: string };
}
interface SenderPod {
  terminationGracePeriodSeconds: number;
  containers: Array<{ envFrom?: Array<{ configMapRef?: { name: string } }> }>;
}

const COMPONENT = 'k8s/components/sender-autoscaling';
const ADAPTER_VALUES = `${COMPONENT}/prometheus-adapter-values.yaml`;
const NAMESPACE = 'messenger-gateway';

const specOf = <T>(o: K8sObject) => o.spec as unknown as T;
const find = (objs: K8sObject[], kind: string, name: string) =>
  objs.find((o) => o.kind === kind && o.metadata.name === name);

/** A Kubernetes quantity as a number ("2500", "2.5k", 2500). */
function quantity(q: string | number | undefined): number {
  const m = /^(\d+(?:\.\d+)?)(k|M)?$/.exec(String(q));
  if (!m) throw new Error(`not a plain quantity: ${q}`);
  return Number(m[1]) * (m[2] === 'k' ? 1e3 : m[2] === 'M' ? 1e6 : 1);
}

/** The fastest a rule set lets the count move, in pods a second (Pods policies only). */
function podsPerSecond(rules: ScalingRules): number {
  const pods = (rules.policies ?? []).filter((p) => p.type === 'Pods');
  expect(pods, 'a Pods policy (a count, not a percentage)').to.not.be.empty;
  const rates = pods.map((p) => p.value / p.periodSeconds);
  return rules.selectPolicy === 'Min' ? Math.min(...rates) : Math.max(...rates);
}

/** The adapter's rules: the Helm chart's `rules.external` list. */
const adapterRules = () =>
  (parse(readFileSync(repoPath(ADAPTER_VALUES), 'utf8')) as { rules: { external: AdapterRule[] } }).rules
    .external;

/** The rule serving an external metric name (the adapter's `name.as`, else the series name). */
function ruleFor(metric: string): AdapterRule {
  const rule = adapterRules().find((r) => (r.name?.as ?? r.name?.matches) === metric);
  if (!rule) throw new Error(`no adapter rule exposes ${metric}`);
  return rule;
}

/**
 * The query prometheus-adapter sends for an External metric (BuildExternal): the HPA's selector as
 * label matchers, then the HPA's namespace under the label the rule maps to `namespace`.
 */
function adapterQuery(rule: AdapterRule, series: string, selector: Record<string, string>, ns: string) {
  const nsLabel = Object.entries(rule.resources?.overrides ?? {}).find(
    ([, r]) => r.resource === 'namespace',
  )?.[0];
  const matchers = Object.entries(selector).map(([k, v]) => `${k}="${v}"`);
  if (rule.resources?.namespaced !== false && nsLabel) matchers.push(`${nsLabel}="${ns}"`);
  return rule.metricsQuery
    .replaceAll('<<.Series>>', series)
    .replaceAll('<<.LabelMatchers>>', matchers.join(','))
    .replaceAll('<<.GroupBy>>', '');
}

describe('Kubernetes sender autoscaling (k8s/components/sender-autoscaling)', () => {
  let objs: K8sObject[];
  let hpa: HpaSpec;
  let external: NonNullable<MetricSpec['external']>;

  before(async () => {
    // as if added to the production overlay's `components:` with monitoring (which it needs)
    objs = await renderKustomize({
      dir: 'k8s/overlays/production',
      namespace: NAMESPACE,
      components: ['k8s/components/monitoring', COMPONENT],
    });
    hpa = specOf<HpaSpec>(find(objs, 'HorizontalPodAutoscaler', 'sender')!);
    external = hpa.metrics.find((m) => m.type === 'External')!.external!;
  });

  it('When the component is rendered with production, then every object validates and the sender HPA targets the sender Deployment in its namespace', () => {
    for (const obj of objs) validateObject(obj);
    const sender = find(objs, 'Deployment', 'sender');
    expect(sender, 'the sender Deployment').to.not.equal(undefined);
    expect(hpa.scaleTargetRef).to.deep.equal({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'sender' });
    expect(find(objs, 'HorizontalPodAutoscaler', 'sender')!.metadata.namespace).to.equal(
      sender!.metadata.namespace,
    );
    // the api keeps its own HPA; one HPA per Deployment
    const targets = objs
      .filter((o) => o.kind === 'HorizontalPodAutoscaler')
      .map((o) => specOf<HpaSpec>(o).scaleTargetRef.name);
    expect(targets).to.have.members(['api', 'sender']);
  });

  it('When the HPA owns the sender count, then the Deployment has no replicas of its own and the bounds keep two senders for failover', () => {
    const sender = specOf<{ replicas?: number }>(find(objs, 'Deployment', 'sender')!);
    expect(sender.replicas, 'a count in the manifest would reset the HPA on every apply').to.equal(undefined);
    expect(hpa.minReplicas).to.be.at.least(2);
    expect(hpa.maxReplicas).to.be.greaterThan(hpa.minReplicas);
  });

  it('When the metric is read, then it is the linked-account count per sender, a metric the senders export', async () => {
    const exported = await exportedSeriesNames();
    expect(hpa.metrics.map((m) => m.type)).to.deep.equal(['External']);
    expect(external.metric.name).to.equal('mgw_devices_linked');
    expect(external.metric.selector?.matchLabels).to.deep.equal({ job: 'sender' });
    expect(external.target.type).to.equal('AverageValue');
    expect(quantity(external.target.averageValue)).to.be.greaterThan(0);
    const [series] = promqlMetricNames(ruleFor(external.metric.name).seriesQuery);
    expect(exported.has(series!), `${series} is exported`).to.equal(true);
  });

  it('When the adapter rule is read, then its series and metrics queries name only exported metrics and it is scoped to the HPA namespace', async () => {
    const exported = await exportedSeriesNames();
    for (const rule of adapterRules()) {
      const series = promqlMetricNames(rule.seriesQuery);
      expect(series, rule.seriesQuery).to.have.length(1);
      const query = rule.metricsQuery.replaceAll('<<.Series>>', series[0]!);
      for (const name of [...series, ...promqlMetricNames(query.replace(/<<[^>]*>>/g, ''))]) {
        expect(exported.has(name), `${name} is not a metric we export`).to.equal(true);
      }
      expect(rule.resources?.overrides?.namespace, 'namespace label -> namespace resource').to.deep.equal({
        resource: 'namespace',
      });
      expect(rule.resources?.namespaced).to.not.equal(false);
    }
  });

  it('When promtool evaluates the adapter query the HPA causes, then it parses and counts each linked account once, in this namespace only', async () => {
    const rule = ruleFor(external.metric.name);
    const series = promqlMetricNames(rule.seriesQuery)[0]!;
    const query = adapterQuery(rule, series, external.metric.selector?.matchLabels ?? {}, NAMESPACE);
    const at = (labels: string) => `${series}{namespace="${NAMESPACE}",${labels}}`;
    const tests = {
      rule_files: [],
      evaluation_interval: '1m',
      tests: [
        {
          interval: '15s',
          input_series: [
            // every sender reports the whole linked set; one scanned before the last link
            { series: at('job="sender",pod="sender-a"'), values: '5000x8' },
            { series: at('job="sender",pod="sender-b"'), values: '5000x8' },
            { series: at('job="sender",pod="sender-c"'), values: '4999x8' },
            // the api registers the same catalogue but never sets the gauge
            { series: at('job="api",pod="api-a"'), values: '0x8' },
            { series: `${series}{namespace="other",job="sender",pod="x"}`, values: '99999x8' },
          ],
          promql_expr_test: [
            { expr: rule.seriesQuery, eval_time: '1m', exp_samples: expectedSeries(series) },
            { expr: query, eval_time: '1m', exp_samples: [{ labels: '{}', value: 5000 }] },
          ],
        },
      ],
    };
    const dir = mkdtempSync(path.join(os.tmpdir(), 'mgw-adapter-'));
    try {
      const file = path.join(dir, 'adapter-query.test.yml');
      writeFileSync(file, stringify(tests));
      const result = await runTool('promtool', ['test', 'rules', file]);
      expect(result.code, `${query}\n${result.output}`).to.equal(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('When the behavior is read, then the senders scale up promptly and down one at a time, slower than up', () => {
    const { scaleUp, scaleDown } = hpa.behavior ?? {};
    expect(scaleUp, 'scaleUp').to.be.an('object');
    expect(scaleDown, 'scaleDown').to.be.an('object');
    expect(scaleDown!.stabilizationWindowSeconds).to.be.greaterThan(scaleUp!.stabilizationWindowSeconds ?? 0);
    expect(scaleUp!.stabilizationWindowSeconds ?? 0, 'up promptly').to.be.at.most(60);
    expect(podsPerSecond(scaleDown!)).to.be.lessThan(podsPerSecond(scaleUp!));
    // one pod at a time, and no percentage policy that could remove more
    expect(scaleDown!.policies!.every((p) => p.type === 'Pods' && p.value === 1)).to.equal(true);
  });

  it('When a sender is removed, then the next removal waits until its devices can be back on sockets elsewhere', () => {
    const sender = find(objs, 'Deployment', 'sender')!;
    const pod = specOf<{ template: { spec: SenderPod } }>(sender).template.spec;
    const cmName = pod.containers[0]!.envFrom!.find((f) => f.configMapRef)!.configMapRef!.name;
    const cm = find(objs, 'ConfigMap', cmName)!.data!;
    const secrets = (parse(readFileSync(repoPath('k8s/base/secret.yaml'), 'utf8')) as K8sObject).stringData;
    const { connect } = loadSenderConfig({ ...cm, ...secrets });
    // Scaling in to the minimum: the removed sender's share goes to minReplicas senders, whose
    // sockets open at their own rate, together no faster than the install's.
    const share = quantity(external.target.averageValue);
    const opensPerSecond = Math.min(
      connect.perHost.ratePerSecond,
      connect.perSender.ratePerSecond * hpa.minReplicas,
    );
    const settleSeconds = pod.terminationGracePeriodSeconds + share / opensPerSecond;
    const period = Math.min(...hpa.behavior!.scaleDown!.policies!.map((p) => p.periodSeconds));
    expect(period, `a share of ${share} takes ~${Math.round(settleSeconds)} s to move`).to.be.at.least(
      settleSeconds,
    );
  });
});

/** What the adapter's discovery query (seriesQuery) finds among the input series above: all of them. */
function expectedSeries(series: string) {
  const at = (labels: string) => `${series}{${labels}}`;
  return [
    { labels: at(`job="sender",namespace="${NAMESPACE}",pod="sender-a"`), value: 5000 },
    { labels: at(`job="sender",namespace="${NAMESPACE}",pod="sender-b"`), value: 5000 },
    { labels: at(`job="sender",namespace="${NAMESPACE}",pod="sender-c"`), value: 4999 },
    { labels: at(`job="api",namespace="${NAMESPACE}",pod="api-a"`), value: 0 },
    { labels: at('job="sender",namespace="other",pod="x"'), value: 99999 },
  ];
}
