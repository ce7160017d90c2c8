import { expect } from 'chai';
import { STATUS_JID, STATUS_LIMITS, keys } from '@mgw/contracts';
import type { StatusStore, StoredStatus } from '@mgw/store';
import { MemoryRedis, MemoryAcceptor, MemoryMessages } from '../test-support.js';
import { deleteStatus } from './delete-status.js';
import { listStatuses } from './list-statuses.js';
import { postStatus } from './post-status.js';

/** The device's status records in memory: their audiences, due times and views (StatusStore's). */
class MemoryStatuses implements Pick<StatusStore, 'create' | 'forget' | 'has' | 'audience' | 'list'> {
  readonly records = new Map<string, StoredStatus & { deviceId: string; audience?: string[] }>();
  async create(
    deviceId: string,
    messageId: string,
    audience: string[],
    dueAt: number,
    kind: StoredStatus['kind'],
  ) {
    this.records.set(messageId, {
      deviceId,
      messageId,
      dueAt,
      kind,
      audienceSize: audience.length,
      audience,
      viewers: [],
    });
  }
  async forget(_deviceId: string, messageId: string) {
    this.records.delete(messageId);
  }
  async has(deviceId: string, messageId: string) {
    return this.records.get(messageId)?.deviceId === deviceId;
  }
  async audience(deviceId: string, messageId: string) {
    const r = this.records.get(messageId);
    return r?.deviceId === deviceId ? r.audience : undefined;
  }
  async list(deviceId: string, sinceMs: number): Promise<StoredStatus[]> {
    return [...this.records.values()]
      .filter((r) => r.deviceId === deviceId && r.dueAt >= sinceMs)
      .sort((a, b) => b.dueAt - a.dueAt)
      .map(({ deviceId: _d, audience: _a, ...stored }) => stored);
  }
}

/**
 * Statuses without an API: posted through the send pipeline (in memory: the acceptor, the records
 * it leaves, marked sent as the sender marks them), their records in an in-memory status store.
 */
describe('Statuses: postStatus, listStatuses, deleteStatus (an in-memory send pipeline and status store)', () => {
  let redis: MemoryRedis;
  let messages: MemoryMessages;
  let acceptor: MemoryAcceptor;
  let statuses: MemoryStatuses;
  let deps: {
    acceptor: MemoryAcceptor;
    redis: MemoryRedis['client'];
    statuses: MemoryStatuses;
    messages: MemoryMessages;
  };
  const deviceId = 'st-1';
  const viewers = ['15554000001', '15554000002'];
  const jids = viewers.map((p) => `${p}@s.whatsapp.net`);

  beforeEach(() => {
    redis = new MemoryRedis();
    messages = new MemoryMessages();
    acceptor = new MemoryAcceptor(messages);
    statuses = new MemoryStatuses();
    deps = { acceptor, redis: redis.client, statuses, messages };
  });

  async function post(body: Parameters<typeof postStatus>[2]): Promise<string> {
    const accepted = await postStatus(deps, deviceId, body);
    if (accepted.kind !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(accepted)}`);
    return accepted.messageId;
  }
  /** A status posted now and marked sent `agoMs` ago. */
  async function sentStatus(agoMs: number): Promise<string> {
    const id = await post({ text: 'Open today', audience: viewers });
    messages.sent(deviceId, id, new Date(Date.now() - agoMs));
    return id;
  }

  describe('postStatus', () => {
    it('When a status is posted to a list, then one message to status@broadcast carries the audience and its look, as a list of one named after it; its record is kept', async () => {
      const sendAt = new Date(Date.now() + 3600_000).toISOString();
      const accepted = await postStatus(deps, deviceId, {
        text: 'Sale',
        audience: viewers,
        backgroundColor: '#112233',
        font: 'serif' as never,
        sendAt,
      } as never);
      expect(accepted).to.deep.include({ kind: 'accepted', audienceSize: 2, sendAt });
      const id = (accepted as { messageId: string }).messageId;
      expect((accepted as { batchId: string }).batchId).to.equal(id);
      const [req] = acceptor.requests;
      expect(req).to.deep.include({
        deviceId,
        recipients: [STATUS_JID],
        batchId: id,
        messageIds: [id],
        sendAt: Date.parse(sendAt),
      });
      expect(req!.content.text).to.equal('Sale');
      expect(req!.content.status).to.deep.include({ audience: jids, backgroundColor: '#FF112233' });
      expect(await statuses.audience(deviceId, id)).to.deep.equal(jids);
    });

    it("When the audience is the account's contacts, then its chats of phones and LIDs (not groups); none is refused, so is more than the bound", async () => {
      redis.addMembers(
        keys.deviceChats(deviceId),
        '15554000001',
        '123456789012345@lid',
        '120363000000000001@g.us',
      );
      await post({ text: 'Hi all', audience: 'contacts' });
      expect(acceptor.requests[0]!.content.status?.audience).to.have.members([
        '15554000001@s.whatsapp.net',
        '123456789012345@lid',
      ]);

      const refusedFor = async (device: string) => {
        const outcome = await postStatus(deps, device, { text: 'x', audience: 'contacts' });
        return outcome.kind === 'refused' && outcome.reason === 'invalid'
          ? outcome.details![0]!.message
          : outcome;
      };
      expect(await refusedFor('st-no-chats')).to.include('names nobody');
      const many = Array.from({ length: STATUS_LIMITS.audience + 1 }, (_, i) => String(15550000000 + i));
      redis.addMembers(keys.deviceChats('st-busy'), ...many);
      expect(await refusedFor('st-busy')).to.include(`at most ${STATUS_LIMITS.audience} viewers`);
      expect(acceptor.requests).to.have.length(1);
    });

    it('When the queue refuses the status, or fails, then its record is taken back; a body against the rules is invalid before anything', async () => {
      acceptor.refusals.push({ kind: 'refused', reason: 'no_device' });
      expect(await postStatus(deps, deviceId, { text: 'x', audience: viewers })).to.deep.equal({
        kind: 'refused',
        reason: 'no_device',
      });
      expect(statuses.records.size).to.equal(0);
      acceptor.accept = async () => {
        throw new Error('Redis went away');
      };
      let thrown: unknown;
      await postStatus(deps, deviceId, { text: 'x', audience: viewers }).catch(
        (err: unknown) => (thrown = err),
      );
      expect((thrown as Error).message).to.equal('Redis went away');
      expect(statuses.records.size).to.equal(0);
      expect(
        await postStatus(deps, deviceId, {
          text: 'x',
          audience: viewers,
          attachment: { type: 'image', url: 'https://example.com/a.png' },
          font: 'serif',
        } as never),
      ).to.deep.include({ kind: 'refused', reason: 'invalid' });
    });
  });

  describe('listStatuses', () => {
    it('When a status is scheduled, then it is listed as scheduled: its list, kind, audience size and sendAt, no views yet', async () => {
      const sendAt = new Date(Date.now() + 3600_000).toISOString();
      const id = await post({ text: 'Tomorrow: sale', audience: viewers, sendAt });
      expect(await listStatuses(deps, deviceId)).to.deep.equal([
        {
          messageId: id,
          batchId: id,
          status: 'scheduled',
          kind: 'text',
          audienceSize: 2,
          sendAt,
          views: 0,
          viewers: [],
        },
      ]);
    });

    it('When a status was sent and viewed, then it shows when it was sent and expires, and its viewers by phone or LID in the order they viewed', async () => {
      const id = await post({ text: 'Open today', audience: ['15554000001', '123456789012345@lid'] });
      const sentAt = new Date(Date.now() - 60_000);
      messages.sent(deviceId, id, sentAt);
      const views = [
        { jid: '123456789012345@lid', viewedAt: new Date(Date.now() - 30_000).toISOString() },
        { jid: '15554000001@s.whatsapp.net', viewedAt: new Date().toISOString() },
      ];
      statuses.records.get(id)!.viewers.push(...views);

      expect(await listStatuses(deps, deviceId)).to.deep.equal([
        {
          messageId: id,
          batchId: id,
          status: 'sent',
          kind: 'text',
          audienceSize: 2,
          sentAt: sentAt.toISOString(),
          expiresAt: new Date(sentAt.getTime() + STATUS_LIMITS.liveMs).toISOString(),
          views: 2,
          viewers: [
            { viewer: { lid: '123456789012345@lid' }, viewedAt: views[0]!.viewedAt },
            { viewer: { phone: '15554000001' }, viewedAt: views[1]!.viewedAt },
          ],
        },
      ]);
    });

    it("When a status's message record is gone, then it is left out (a failed one shows its error); another device's statuses are not listed", async () => {
      const kept = await post({ text: 'kept', audience: viewers });
      const gone = await post({ text: 'gone', audience: viewers });
      messages.records.delete(`${deviceId}\n${gone}`);
      messages.failed(deviceId, kept, 'not_allowed');
      const listed = await listStatuses(deps, deviceId);
      expect(listed.map((st) => [st.messageId, st.status, st.error])).to.deep.equal([
        [kept, 'failed', 'not_allowed'],
      ]);
      expect(await listStatuses(deps, 'st-other')).to.deep.equal([]);
    });
  });

  describe('deleteStatus', () => {
    it('When the status is still queued, then it is deleted at once (its record reads deleted); a second delete is not_deletable', async () => {
      const id = await post({
        text: 'Later',
        audience: viewers,
        sendAt: new Date(Date.now() + 3600_000).toISOString(),
      });
      expect(await deleteStatus(deps, deviceId, id)).to.deep.equal({
        ok: true,
        data: { messageId: id, status: 'deleted' },
      });
      expect((await messages.get(deviceId, id))?.status).to.equal('deleted');
      expect(await deleteStatus(deps, deviceId, id)).to.deep.equal({ ok: false, reason: 'not_deletable' });
    });

    it('When the status was sent within its day, then its revoke is queued to status@broadcast with the same audience (deleting, its messageId)', async () => {
      const id = await sentStatus(60_000);
      const outcome = await deleteStatus(deps, deviceId, id);
      const data = (outcome as { data: { messageId: string; deleteMessageId: string; status: string } }).data;
      expect(Object.keys(data)).to.deep.equal(['messageId', 'deleteMessageId', 'status']);
      expect(data).to.deep.include({ messageId: id, status: 'deleting' });
      const revoke = acceptor.requests.at(-1)!;
      expect(revoke.recipients).to.deep.equal([STATUS_JID]);
      expect(revoke.content).to.deep.equal({ delete: { messageId: id }, status: { audience: jids } });
      expect((await messages.get(deviceId, data.deleteMessageId))?.status).to.equal('queued');
    });

    it('When the status was sent more than a day ago, or its audience is no longer kept, then expired and nothing is queued', async () => {
      const old = await sentStatus(STATUS_LIMITS.liveMs + 60_000);
      const forgotten = await sentStatus(60_000);
      delete statuses.records.get(forgotten)!.audience;
      const before = acceptor.requests.length;
      expect(await deleteStatus(deps, deviceId, old)).to.deep.equal({ ok: false, reason: 'expired' });
      expect(await deleteStatus(deps, deviceId, forgotten)).to.deep.equal({ ok: false, reason: 'expired' });
      expect(acceptor.requests).to.have.length(before);
    });

    it("When the id is unknown, another device's status, or a message of this device that is no status, then not_found", async () => {
      const theirs = await post({
        text: 'x',
        audience: viewers,
        sendAt: new Date(Date.now() + 3600_000).toISOString(),
      });
      const plain = (await acceptor.accept({
        deviceId,
        kind: 'send',
        recipients: ['15554100000'],
        content: { text: 'hi' },
        priority: 0,
      })) as {
        jobs: { messageId: string }[];
      };
      for (const [device, id] of [
        [deviceId, 'no-such-message'],
        ['st-other', theirs],
        [deviceId, plain.jobs[0]!.messageId],
      ] as const)
        expect(await deleteStatus(deps, device, id), `${device} ${id}`).to.deep.equal({
          ok: false,
          reason: 'not_found',
        });
      expect((await messages.get(deviceId, theirs))?.status).to.equal('scheduled');
    });

    it("When the queue refuses the revoke (the device was logged out), then refused with the queue's reason", async () => {
      const id = await sentStatus(60_000);
      acceptor.refusals.push({ kind: 'refused', reason: 'no_device' });
      expect(await deleteStatus(deps, deviceId, id)).to.deep.equal({
        ok: false,
        reason: 'refused',
        refusal: { kind: 'refused', reason: 'no_device' },
      });
      expect((await messages.get(deviceId, id))?.status).to.equal('sent');
    });
  });
});
