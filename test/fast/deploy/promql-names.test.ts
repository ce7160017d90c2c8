import { expect } from 'chai';
import { promqlMetricNames } from '../../deploy/helpers/metric-names.js';

describe('PromQL metric-name extraction (used to check dashboards and rules)', () => {
  it('When an expression has functions, aggregations, matchers, ranges and numbers, then only metric names remain', () => {
    const expr =
      'histogram_quantile(0.99, sum by (le, route) (rate(mgw_http_request_duration_seconds_bucket{route!~".*otp.*"}[5m])))' +
      ' / on (job) group_left(instance) sum without (pod) (rate(mgw_http_requests_total{status=~"5.."}[$__rate_interval] offset 1h)) > 1e3';
    expect(promqlMetricNames(expr)).to.have.members([
      'mgw_http_request_duration_seconds_bucket',
      'mgw_http_requests_total',
    ]);
  });

  it('When an expression uses set operators, bool and absent, then keywords are not taken for metrics', () => {
    const expr =
      'absent(up{job="sender"} == 1) or nodejs_eventloop_lag_p99_seconds > bool 0.5 unless mgw_leases_held';
    expect(promqlMetricNames(expr)).to.have.members([
      'up',
      'nodejs_eventloop_lag_p99_seconds',
      'mgw_leases_held',
    ]);
  });
});
