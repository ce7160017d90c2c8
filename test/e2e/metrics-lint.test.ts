/**
 * Every running service's own metrics pass `promtool check metrics` after real traffic
 * (Node's default metrics are served too but not linted: prom-client names some gauges *_total).
 */
import { expect } from 'chai';
import { METRIC_PREFIX } from '@mgw/contracts';
import { checkMetricsExposition, ownMetricFamilies } from '../support/promtool.js';
import { Stack, waitFor } from '@mgw/testing';

describe('e2e: /metrics of every running service passes promtool', function () {
  this.timeout(120_000);
  let stack: Stack;

  before(async () => {
    stack = await Stack.start();
    await stack.linkByQr('15550200001', 'Metrics Account');
    const sent = await stack.api<{ messageId: string }>('POST', '/send', {
      to: '15550200002',
      text: 'metrics',
    });
    await waitFor(
      async () =>
        (await stack.api<{ data: { status: string } }>('GET', `/messages/${sent.body.messageId}`)).body.data
          .status !== 'queued',
      { what: 'the message to leave queued' },
    );
  });
  after(() => stack?.stop());

  for (const service of ['api', 'connection', 'sender'] as const) {
    it(`When ${service} is scraped after traffic, then its own metric families pass promtool check metrics`, async () => {
      const proc = stack.processes.find((p) => p.name.startsWith(service))!;
      const res = await fetch(`http://127.0.0.1:${proc.metricsPort}/metrics`);
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/plain/);
      const page = await res.text();
      expect(page).to.include('process_resident_memory_bytes'); // Node's defaults are served as well
      const own = ownMetricFamilies(page, METRIC_PREFIX);
      expect(own).to.include(`${METRIC_PREFIX}redis_up`);
      if (service === 'api') {
        expect(own).to.include(`${METRIC_PREFIX}redis_memory_used_bytes`);
        expect(own).to.include(`${METRIC_PREFIX}redis_memory_max_bytes`);
        const publicPort = await fetch(`http://127.0.0.1:${proc.port}/metrics`);
        expect(publicPort.status, '/metrics is not on the public port').to.equal(404);
      }
      await checkMetricsExposition(own);
    });
  }
});
