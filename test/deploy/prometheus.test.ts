import { readFileSync, readdirSync } from 'node:fs';
import { expect } from 'chai';
import { parse } from 'yaml';
import { exportedSeriesNames, promqlMetricNames } from './helpers/metric-names.js';
import { repoPath, runTool, type ToolResult } from './helpers/tools.js';

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface RuleFile {
  groups: Array<{ name: string; rules: Rule[] }>;
}

const RULES_DIR = 'deploy/prometheus/rules';
const ruleFiles = readdirSync(repoPath(RULES_DIR))
  .filter((f) => f.endsWith('.yml'))
  .map((f) => `${RULES_DIR}/${f}`);
const testFile = 'deploy/prometheus/tests/messenger-gateway.test.yml';

function alertsOf(file: string): Rule[] {
  const doc = parse(readFileSync(repoPath(file), 'utf8')) as RuleFile;
  return doc.groups.flatMap((g) => g.rules).filter((r) => r.alert);
}

describe('Prometheus configuration and alert rules', () => {
  let checkConfig: ToolResult;
  let checkRules: ToolResult;
  let testRules: ToolResult;

  before(async function () {
    // Three promtool runs at once: seconds on a quiet machine, past mocha's 20 s beside the suite.
    this.timeout(120_000);
    [checkConfig, checkRules, testRules] = await Promise.all([
      runTool('promtool', ['check', 'config', 'deploy/prometheus/prometheus.yml']),
      runTool('promtool', ['check', 'rules', ...ruleFiles]),
      runTool('promtool', ['test', 'rules', testFile]),
    ]);
  });

  it('When promtool checks the compose prometheus.yml and the rule files it loads, then both are valid', () => {
    expect(checkConfig.code, checkConfig.output).to.equal(0);
    expect(checkConfig.output).to.match(/SUCCESS/);
    expect(ruleFiles, 'rule files').to.not.be.empty;
    expect(checkRules.code, checkRules.output).to.equal(0);
  });

  it('When promtool runs the rule unit tests, then every case passes', () => {
    expect(testRules.code, testRules.output).to.equal(0);
    expect(testRules.output).to.match(/SUCCESS/);
  });

  it('When the unit tests are read, then every alert has a case where it fires and one where it stays silent', () => {
    const tests = parse(readFileSync(repoPath(testFile), 'utf8')) as {
      rule_files: string[];
      tests: Array<{ alert_rule_test?: Array<{ alertname: string; exp_alerts?: unknown[] }> }>;
    };
    expect(tests.rule_files.map((f) => f.replace(/^\.\.\//, 'deploy/prometheus/'))).to.have.members(
      ruleFiles,
    );
    const cases = tests.tests.flatMap((t) => t.alert_rule_test ?? []);
    for (const alert of ruleFiles.flatMap(alertsOf)) {
      const mine = cases.filter((c) => c.alertname === alert.alert);
      expect(
        mine.some((c) => (c.exp_alerts ?? []).length > 0),
        `${alert.alert} has no firing case`,
      ).to.equal(true);
      expect(
        mine.some((c) => (c.exp_alerts ?? []).length === 0),
        `${alert.alert} has no silent case`,
      ).to.equal(true);
    }
  });

  it('When the alerts are read, then each has a severity, a summary and a description, and covers the required conditions', () => {
    const alerts = ruleFiles.flatMap(alertsOf);
    for (const a of alerts) {
      expect(a.labels?.severity, `${a.alert} severity`).to.be.oneOf(['critical', 'warning']);
      expect(a.annotations?.summary, `${a.alert} summary`).to.be.a('string').and.not.empty;
      expect(a.annotations?.description, `${a.alert} description`).to.be.a('string').and.not.empty;
    }
    const uses = (metric: string) => alerts.some((a) => promqlMetricNames(a.expr).includes(metric));
    for (const metric of [
      'mgw_http_requests_total',
      'mgw_http_request_duration_seconds_bucket',
      'mgw_queue_jobs',
      'mgw_jobs_failed_total',
      'mgw_device_connection_state',
      'mgw_device_reconnects_total',
      'mgw_device_restricted',
      'mgw_leases_held',
      'mgw_devices_linked',
      'mgw_redis_up',
      'mgw_redis_memory_used_bytes',
      'mgw_redis_memory_max_bytes',
      'up',
    ]) {
      expect(uses(metric), `no alert uses ${metric}`).to.equal(true);
    }
  });

  it('When the metric names in every rule expression are extracted, then each is one our services export', async () => {
    const exported = await exportedSeriesNames();
    const unknown = ruleFiles
      .flatMap(alertsOf)
      .flatMap((a) => promqlMetricNames(a.expr).map((m) => `${a.alert}: ${m}`))
      .filter((entry) => !exported.has(entry.split(': ')[1]!));
    expect(unknown, 'metrics not in the catalogue').to.deep.equal([]);
  });

  it('When the scrape config is read, then it scrapes the api, connection, sender and notifier services on their ops ports', () => {
    const config = parse(readFileSync(repoPath('deploy/prometheus/prometheus.yml'), 'utf8')) as {
      rule_files: string[];
      scrape_configs: Array<{ job_name: string; dns_sd_configs?: Array<{ names: string[]; port: number }> }>;
    };
    const byJob = new Map(config.scrape_configs.map((s) => [s.job_name, s]));
    for (const [job, port] of [
      ['api', 9464],
      ['connection', 9464],
      ['sender', 9464],
      ['notifier', 9464],
    ] as const) {
      const sd = byJob.get(job)?.dns_sd_configs?.[0];
      expect(sd, `scrape job ${job}`).to.deep.include({ names: [job], port });
    }
    expect(config.rule_files).to.deep.equal(['rules/*.yml']);
  });
});
