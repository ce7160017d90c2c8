import { expect } from 'chai';
import { Encryption, webhookDeliveryKeys } from '@mgw/store';
import { MemoryRedis } from '../test-support.js';
import { outletsReader } from './outlets.js';

/**
 * What a device's events did on their ways out, as the notifier keeps it (an in-memory Redis
 * here): the webhook's report and each broker transport's.
 */
describe('Outlets: the webhook and broker reports of a device (in-memory Redis)', () => {
  it('When no delivery happened and no broker ran, then the endpoint as configured, nothing waiting, each broker without a start', async () => {
    const redis = new MemoryRedis();
    const endpoint = { url: 'https://hooks.test/in', events: ['message.sent'] };
    const read = outletsReader({
      redis: redis.client,
      encryption: Encryption.fromEnv(),
      webhooks: { get: async (d: string) => (d === 'd-1' ? endpoint : undefined) },
    } as never);
    const outlets = await read('d-1');
    expect(outlets.webhook).to.deep.equal({ endpoint, waiting: 0, retries: { count: 0 }, exhausted: 0 });
    expect(outlets.brokers).to.deep.equal({
      rabbitmq: { failures: 0 },
      nats: { failures: 0 },
      sqs: { failures: 0 },
    });
    expect((await read('d-2')).webhook.endpoint).to.equal(null);
  });

  it('When retries wait, then how many and when the earliest is due', async () => {
    const redis = new MemoryRedis();
    const due = Date.parse('2026-01-01T10:00:00.000Z');
    redis.zset(webhookDeliveryKeys('d-1').retries, { 'ev-2': due + 5000, 'ev-1': due });
    const read = outletsReader({
      redis: redis.client,
      encryption: Encryption.fromEnv(),
      webhooks: { get: async () => undefined },
    } as never);
    expect((await read('d-1')).webhook.retries).to.deep.equal({
      count: 2,
      nextDueAt: '2026-01-01T10:00:00.000Z',
    });
  });
});
