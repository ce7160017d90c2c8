import { expect } from 'chai';
import { MemoryRedis, MemoryAcceptor, MemoryMessages } from '../test-support.js';
import { config, poolId, poolState, quietLogger } from './pool-fixture.js';
import { sendThroughPool, type PoolSendDeps } from './pool-send.js';

/**
 * A pooled send without an API or Redis: the pool's definition and its devices' state in an
 * in-memory Redis (as the API and the senders write them), the send pipeline in memory, the pool's
 * batch records faked.
 */
describe("sendThroughPool: a pooled send spread over the pool's devices (in-memory Redis and send pipeline)", () => {
  const logger = quietLogger();
  let redis: MemoryRedis;
  let device: ReturnType<typeof poolState>['device'];
  let define: ReturnType<typeof poolState>['define'];
  let messages: MemoryMessages;
  let acceptor: MemoryAcceptor;
  let sticky: Map<string, string>;
  let owners: Map<string, string>;
  let recorded: unknown[];
  let deps: PoolSendDeps;

  beforeEach(() => {
    redis = new MemoryRedis();
    ({ device, define } = poolState(redis));
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
        record: async (_p: string, batchId: string, batch: unknown) => void recorded.push({ batchId, batch }),
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

  it('When the body is one a pool cannot send (a reaction, a template, a group, a username, an uploaded object), then refused before any device is looked at', async () => {
    const refusal = async (body: object) => {
      const outcome = await sendThroughPool(deps, poolId, body as never);
      return 'reason' in outcome ? outcome.reason : outcome.kind;
    };
    expect(await refusal({ to: '15550001111', reaction: { messageId: 'm', emoji: '👍' } })).to.equal(
      'invalid',
    );
    expect(
      await refusal({ to: ['15550001111'], template: { name: 'order_update', language: 'en_US' } }),
    ).to.equal('invalid');
    expect(await refusal({ to: ['15550001111', '120363000000000001@g.us'], text: 'Hi' })).to.equal('invalid');
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
