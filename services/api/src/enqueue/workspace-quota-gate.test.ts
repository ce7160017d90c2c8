import { expect } from 'chai';
import type { WorkspaceQuotas, WorkspaceRecord } from '@mgw/store';
import { WorkspaceQuotaGate, type WorkspaceQuotaGateDeps } from './workspace-quota-gate.js';

/** The gate's decisions over faked counts (the scripts are the store's, tested on real Redis). */
describe("Workspace quotas: a send's and an upload's room, judged before they are written", () => {
  const NOW = Date.parse('2026-11-28T15:00:00Z');
  let calls: string[];
  let day: number;
  const gate = (quotas: WorkspaceQuotas, counts: { queued?: number; media?: number } = {}) => {
    const deps: WorkspaceQuotaGateDeps = {
      ownerOf: async (deviceId) => (calls.push(`owner ${deviceId}`), 'acme'),
      workspace: async (id) => ({ id, quotas }) as WorkspaceRecord,
      devicesOf: async () => (calls.push('devices'), ['d1', 'd2']),
      counts: {
        queued: async (ids) => (calls.push(`queued ${ids.join(',')}`), counts.queued ?? 0),
        mediaBytes: async () => (calls.push('media'), counts.media ?? 0),
        reserveDay: async (_ws, n, limit) => {
          calls.push(`reserve ${n}`);
          if (day + n > limit) return { reserved: false, count: day };
          day += n;
          return { reserved: true, day: '2026-11-28', count: day };
        },
        giveBackDay: async (_ws, d, n) => {
          calls.push(`give back ${n} ${d}`);
          day -= n;
        },
      },
    };
    return new WorkspaceQuotaGate(deps);
  };
  beforeEach(() => {
    calls = [];
    day = 0;
  });

  it('When the workspace has no send quota, then nothing is counted or read but its owner and record', async () => {
    expect(await gate({ devices: 3, mediaBytes: 10 }).admit('d1', 5, NOW)).to.equal(undefined);
    expect(calls).to.deep.equal(['owner d1']);
  });

  it('When a request would pass the queued quota, then it is refused naming it, with no reset time', async () => {
    const g = gate({ queuedMessages: 10 }, { queued: 8 });
    expect(await g.admit('d1', 2, NOW)).to.equal(undefined);
    expect(await g.admit('d1', 3, NOW)).to.deep.equal({
      kind: 'refused',
      reason: 'workspace_quota',
      quota: 'queuedMessages',
      limit: 10,
      resetsAt: null,
    });
    expect(calls).to.include('queued d1,d2');
  });

  it('When the daily quota is reserved, then a request is taken whole or refused whole with the next UTC midnight; a give-back frees room', async () => {
    const g = gate({ messagesPerDay: 5 });
    const held = await g.admit('d1', 4, NOW);
    expect(held).to.have.property('giveBack');
    expect(await g.admit('d1', 2, NOW)).to.deep.equal({
      kind: 'refused',
      reason: 'workspace_quota',
      quota: 'messagesPerDay',
      limit: 5,
      resetsAt: '2026-11-29T00:00:00.000Z',
    });
    await (held as { giveBack(n: number): Promise<void> }).giveBack(4);
    expect(calls).to.include('give back 4 2026-11-28');
    expect(await g.admit('d1', 5, NOW)).to.have.property('giveBack');
  });

  it('When both send quotas are set and the queue is full, then the day is not reserved at all', async () => {
    expect(
      await gate({ queuedMessages: 1, messagesPerDay: 100 }, { queued: 1 }).admit('d1', 1, NOW),
    ).to.include({
      quota: 'queuedMessages',
    });
    expect(calls.some((c) => c.startsWith('reserve'))).to.equal(false);
  });

  it('When an upload would pass the media quota, then it is refused naming it; without the quota, nothing is summed', async () => {
    expect(await gate({ mediaBytes: 1000 }, { media: 600 }).admitMedia('d1', 400)).to.equal(undefined);
    expect(await gate({ mediaBytes: 1000 }, { media: 600 }).admitMedia('d1', 401)).to.include({
      quota: 'mediaBytes',
      limit: 1000,
    });
    calls = [];
    expect(await gate({}).admitMedia('d1', 1e9)).to.equal(undefined);
    expect(calls).to.deep.equal(['owner d1']);
  });
});
