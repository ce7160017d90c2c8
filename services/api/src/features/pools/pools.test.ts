import { PassThrough } from 'node:stream';
import { expect } from 'chai';
import { createLogger } from '@mgw/common';
import { createMetrics, keys, type PoolBatchRecord } from '@mgw/contracts';
import { loadApiConfig } from '../../config.js';
import { MemoryRedis, MemoryAcceptor, MemoryMessages } from '../test-support.js';
import { controlPoolBatch } from './pool-control.js';
import { poolDevices, poolMembers, spread, type PoolDevice } from './pool-devices.js';
import { PoolMover } from './pool-mover.js';
import { sendThroughPool, type PoolSendDeps } from './pool-send.js';

/**
 * Pools without an API or Redis: a pool's definition and its devices' state in an in-memory Redis
 * (as the API and the senders write them), the send pipeline in memory, the pool's batch records
 * faked. What runs a store's script (a batch's control, the mover's lease) is in the full suite
 * (services/api/test/pool-send.test.ts, pool-mover.test.ts, batches.test.ts).
 */
describe('Pools: the spread, a pooled send, a pooled batch’s control (in-memory Redis and send pipeline)', () => {
  const config = loadApiConfig({ ...process.env, NODE_ENV: 'test' });
  const logger = createLogger({ level: 'silent', service: 'pools-test', stream: new PassThrough() });
  const poolId = 'pool-1';
  let redis: MemoryRedis;

  beforeEach(() => {
    redis = new MemoryRedis();
  });
  /** A device of the pool as its sender leaves it: connected or not, and what it holds. */
  const device = (deviceId: string, status = 'connected', queued = 0) => {
    redis.hash(keys.session(deviceId), { status });
    if (queued) redis.hash(keys.deviceQueue(deviceId), { messages: String(queued) });
  };
  const define = (...devices: string[]) =>
    redis.hash(keys.pool(poolId), { devices: JSON.stringify(devices) });

  describe('pool-devices', () => {
    it('When a pool is read, then its members as defined; an unknown pool is undefined', async () => {
      define('d-1', 'd-2');
      expect(await poolMembers(redis.client, poolId)).to.deep.equal(['d-1', 'd-2']);
      expect(await poolMembers(redis.client, 'pool-none')).to.equal(undefined);
    });

    it('When the devices are looked at, then a linked one takes its share by what it may still send; one not linked drops out', async () => {
      device('d-1');
      device('d-2', 'connected', 400);
      device('d-3', 'disconnected');
      const devices = await poolDevices(redis.client, ['d-1', 'd-2', 'd-3'], config.sendPolicy);
      expect(devices.map((d) => [d.deviceId, d.linked, d.dropped])).to.deep.equal([
        ['d-1', true, undefined],
        ['d-2', true, undefined],
        ['d-3', false, 'not_linked'],
      ]);
      expect(devices[0]!.health).to.equal(100);
      expect(devices[0]!.weight, 'more left to send: a bigger share').to.be.greaterThan(devices[1]!.weight);
      expect(devices[2]!.weight).to.equal(0);
    });

    it('When messages are spread, then each goes to the device furthest below its fair part, counting what each got', () => {
      const d = (deviceId: string, weight: number) =>
        ({ deviceId, weight, linked: true, health: 100 }) as PoolDevice;
      // 2 : 1 by weight; a tie goes to the device listed first.
      expect(spread([d('a', 2), d('b', 1)], new Map(), 6)).to.deep.equal(['a', 'a', 'b', 'a', 'a', 'b']);
      expect(spread([d('a', 1), d('b', 1)], new Map([['a', 3]]), 3)).to.deep.equal(['b', 'b', 'b']);
      expect(spread([d('a', 1)], new Map(), 0)).to.deep.equal([]);
    });
  });

  describe('sendThroughPool', () => {
    let messages: MemoryMessages;
    let acceptor: MemoryAcceptor;
    let sticky: Map<string, string>;
    let owners: Map<string, string>;
    let recorded: unknown[];
    let deps: PoolSendDeps;

    beforeEach(() => {
      messages = new MemoryMessages();
      acceptor = new MemoryAcceptor(messages);
      sticky = new Map();
      owners = new Map();
      recorded = [];
      deps = {
        redis: redis.client,
        acceptor,
        messages,
        config,
        logger,
        poolBatches: {
          stickyDevices: async (_p: string, recipients: string[]) => recipients.map((r) => sticky.get(r)),
          remember: async (_p: string, d: string, id: string, r: string) => {
            owners.set(id, d);
            sticky.set(r, d);
          },
          record: async (_p: string, batchId: string, batch: unknown) =>
            void recorded.push({ batchId, batch }),
          owner: async (_p: string, id: string) => owners.get(id),
        },
      } as unknown as PoolSendDeps;
    });

    it('When one message goes through the pool, then a device taking shares sends it, and the recipient sticks to that device', async () => {
      define('d-1', 'd-2');
      device('d-1');
      device('d-2', 'disconnected');
      const outcome = await sendThroughPool(deps, poolId, { to: '15550001111', text: 'Hi' } as never);
      expect(outcome).to.deep.include({ kind: 'accepted' });
      expect(acceptor.requests.map((r) => [r.deviceId, r.recipients, r.poolId])).to.deep.equal([
        ['d-1', ['15550001111'], undefined],
      ]);
      expect(sticky.get('15550001111')).to.equal('d-1');
      expect(owners.get((outcome as { messageId: string }).messageId)).to.equal('d-1');
    });

    it("When a batch goes through the pool, then it is spread over the devices (a sticky recipient to its device), one part each under one batch id, recorded as the pool's", async () => {
      define('d-1', 'd-2');
      device('d-1');
      device('d-2');
      sticky.set('15550000004', 'd-2');
      const to = ['15550000001', '15550000002', '15550000003', '15550000004'];
      const outcome = await sendThroughPool(deps, poolId, { to, text: 'Hi' } as never);
      expect(outcome.kind).to.equal('list_accepted');
      const { batchId, messageIds } = outcome as { batchId: string; messageIds: string[] };
      expect(acceptor.requests.every((r) => r.batchId === batchId && r.poolId === poolId)).to.equal(true);
      const byDevice = Object.fromEntries(acceptor.requests.map((r) => [r.deviceId, r.recipients]));
      expect(byDevice['d-2']).to.include('15550000004');
      expect([...byDevice['d-1']!, ...byDevice['d-2']!]).to.have.members(to);
      expect(messageIds).to.have.length(4);
      expect(recorded).to.have.length(1);
    });

    it('When the pool has no device that can hold messages, or no such pool, then no_device and nothing queued', async () => {
      define('d-1');
      device('d-1', 'disconnected');
      expect(await sendThroughPool(deps, poolId, { to: '15550001111', text: 'Hi' } as never)).to.deep.equal({
        kind: 'refused',
        reason: 'no_device',
      });
      expect(
        await sendThroughPool(deps, 'pool-none', { to: '15550001111', text: 'Hi' } as never),
      ).to.deep.equal({
        kind: 'refused',
        reason: 'no_device',
      });
      expect(acceptor.requests).to.deep.equal([]);
    });

    it('When the body is one a pool cannot send (a reaction, a group, a username, an uploaded object), then refused before any device is looked at', async () => {
      const refusal = async (body: object) => {
        const outcome = await sendThroughPool(deps, poolId, body as never);
        return 'reason' in outcome ? outcome.reason : outcome.kind;
      };
      expect(await refusal({ to: '15550001111', reaction: { messageId: 'm', emoji: '👍' } })).to.equal(
        'invalid',
      );
      expect(await refusal({ to: ['15550001111', '120363000000000001@g.us'], text: 'Hi' })).to.equal(
        'invalid',
      );
      expect(await refusal({ to: '@alice.shop', text: 'Hi' })).to.equal('invalid');
      expect(await refusal({ to: '15550001111', attachment: { type: 'image', mediaId: 'med-1' } })).to.equal(
        'media_through_pool',
      );
      expect(await refusal({ to: '15550001111', delete: { messageId: 'unknown' } })).to.equal(
        'revision_target_not_found',
      );
      expect(redis.commands).to.deep.equal([]);
    });

    it('When an edit names a message of the pool, then it goes to the device that holds it', async () => {
      const accepted = (await acceptor.accept({
        deviceId: 'd-2',
        kind: 'send',
        recipients: ['15550001111'],
        content: { text: 'a' },
        priority: 0,
      })) as {
        jobs: { messageId: string }[];
      };
      const id = accepted.jobs[0]!.messageId;
      messages.sent('d-2', id);
      owners.set(id, 'd-2');
      const outcome = await sendThroughPool(deps, poolId, {
        to: '15550001111',
        edit: { messageId: id, text: 'b' },
      } as never);
      expect(outcome).to.deep.include({ kind: 'accepted' });
      expect(acceptor.requests.at(-1)).to.deep.include({
        deviceId: 'd-2',
        content: { edit: { messageId: id, text: 'b' } },
      });
    });

    it('When a later part of a batch is refused, then the request is refused with its reason (all or nothing)', async () => {
      define('d-1', 'd-2');
      device('d-1');
      device('d-2');
      acceptor.accept = async (req) => {
        acceptor.requests.push(req);
        return acceptor.requests.length === 1
          ? MemoryAcceptor.prototype.accept.call(new MemoryAcceptor(), req)
          : ({ kind: 'refused', reason: 'quota_exceeded' } as never);
      };
      const outcome = await sendThroughPool(deps, poolId, {
        to: ['15550000001', '15550000002'],
        text: 'Hi',
      } as never);
      expect(outcome).to.deep.equal({ kind: 'refused', reason: 'quota_exceeded' });
      expect(recorded, 'no pooled batch recorded').to.deep.equal([]);
    });
  });

  describe('controlPoolBatch', () => {
    let state: PoolBatchRecord['state'] | undefined;
    let controlled: string[];
    const deps = () =>
      ({
        poolBatches: {
          get: async () => (state ? ({ batchId: 'b-1', state } as PoolBatchRecord) : undefined),
          control: async (_p: string, _b: string, action: string) => void controlled.push(action),
          meta: async () => ({ devices: [] }),
        },
      }) as unknown as Parameters<typeof controlPoolBatch>[0];
    beforeEach(() => {
      controlled = [];
    });

    it('When the pooled batch is unknown, completed, or cancelled (but for a cancel), then refused and its state is not touched', async () => {
      state = undefined;
      expect(await controlPoolBatch(deps(), poolId, 'b-1', 'pause', logger)).to.deep.equal({
        kind: 'refused',
        reason: 'not_found',
      });
      expect(await controlPoolBatch(deps(), poolId, 'x'.repeat(129), 'pause', logger)).to.deep.equal({
        kind: 'refused',
        reason: 'not_found',
      });
      state = 'completed';
      expect(await controlPoolBatch(deps(), poolId, 'b-1', 'cancel', logger)).to.deep.equal({
        kind: 'refused',
        reason: 'completed',
      });
      state = 'cancelled';
      expect(await controlPoolBatch(deps(), poolId, 'b-1', 'resume', logger)).to.deep.equal({
        kind: 'refused',
        reason: 'cancelled',
      });
      expect(controlled).to.deep.equal([]);
    });

    it("When it is controlled, then the pool's state changes and the batch is answered as it reads after (no device part left here)", async () => {
      state = 'active' as PoolBatchRecord['state'];
      expect(await controlPoolBatch(deps(), poolId, 'b-1', 'pause', logger)).to.deep.equal({
        kind: 'done',
        batch: { batchId: 'b-1', state },
      });
      state = 'cancelled';
      expect(
        (await controlPoolBatch(deps(), poolId, 'b-1', 'cancel', logger)).kind,
        'a repeated cancel',
      ).to.equal('done');
      expect(controlled).to.deep.equal(['pause', 'cancel']);
    });
  });

  describe('PoolMover', () => {
    it('When no pool exists, then a round looks at none (only the pool index read); stopped, it runs no more rounds', async () => {
      const mover = new PoolMover(
        { redis: redis.client, config, logger, metrics: createMetrics() } as never,
        { intervalMs: 5, minHealth: 50 },
      );
      expect(await mover.round()).to.deep.equal([]);
      expect(redis.commands).to.deep.equal(['smembers']);
      mover.start();
      await mover.stop();
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(redis.commands, 'no round after stop').to.deep.equal(['smembers']);
    });
  });
});
