import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { keys, PRIORITY, STATUS_JID, STATUS_LIMITS, type SendJobData } from '@mgw/contracts';
import { markLinked, markUnlinked, SessionStore } from '@mgw/store';
import type { ApiServices } from '../../../src/api-services.js';
import { postStatus } from '../../../src/features/statuses/post-status.js';
import { deleteStatus } from '../../../src/features/statuses/delete-status.js';
import { openUseCaseServices, type UseCaseServices } from '../../helpers/use-case-services.js';

/**
 * Deleting a status without an API: the services over the run's Redis (no HTTP, no sender), its
 * statuses posted through the send path and marked sent as the sender marks them.
 */
describe('deleteStatus: a queued status leaves the queue, a sent one is revoked (services, real Redis)', () => {
  let services: ApiServices;
  let redis: Redis;
  let deviceId: string;
  const viewers = ['15554000001', '15554000002'];

  let opened: UseCaseServices;
  before(async () => {
    opened = await openUseCaseServices('delete-status-test');
    ({ services, redis } = opened);
  });
  beforeEach(async () => {
    deviceId = `ds-${randomBytes(4).toString('hex')}`;
    await new SessionStore(redis).update(deviceId, 'connected');
    await markLinked(redis, deviceId);
  });
  afterEach(async () => services.acceptor.queue(deviceId).obliterate({ force: true }));
  after(() => opened.close());

  /** A status posted to `viewers`, due in an hour (still in the queue). */
  async function queuedStatus(): Promise<string> {
    const sendAt = new Date(Date.now() + 3600_000).toISOString();
    const accepted = await postStatus(services, deviceId, { text: 'Open today', audience: viewers, sendAt });
    if (accepted.kind !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(accepted)}`);
    return accepted.messageId;
  }
  /** A status posted now and marked sent `agoMs` ago, as the sender marks it. */
  async function sentStatus(agoMs: number): Promise<string> {
    const accepted = await postStatus(services, deviceId, { text: 'Open today', audience: viewers });
    if (accepted.kind !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(accepted)}`);
    const job = (await services.acceptor.queue(deviceId).getJob(accepted.messageId))!.data as SendJobData;
    await services.messages.claim(job);
    await services.messages.markSent(job, new Date(Date.now() - agoMs));
    return accepted.messageId;
  }
  const statusOf = async (id: string) => (await services.messages.get(deviceId, id))?.status;
  const queued = () => services.acceptor.queue(deviceId).count();

  it('When the status is still queued, then it is deleted at once (its record reads deleted); a second delete is not_deletable', async () => {
    const id = await queuedStatus();

    expect(await deleteStatus(services, deviceId, id)).to.deep.equal({
      ok: true,
      data: { messageId: id, status: 'deleted' },
    });
    expect(await statusOf(id)).to.equal('deleted');
    expect(await deleteStatus(services, deviceId, id)).to.deep.equal({ ok: false, reason: 'not_deletable' });
  });

  it('When the status was sent within its day, then its revoke is queued to status@broadcast with the same audience (deleting, its messageId)', async () => {
    const id = await sentStatus(60_000);
    const before = await queued();

    const outcome = await deleteStatus(services, deviceId, id);

    expect(outcome).to.deep.include({ ok: true });
    const data = (outcome as { data: { messageId: string; deleteMessageId: string; status: string } }).data;
    expect(Object.keys(data)).to.deep.equal(['messageId', 'deleteMessageId', 'status']);
    expect(data).to.deep.include({ messageId: id, status: 'deleting' });
    expect(data.deleteMessageId).to.be.a('string').and.not.equal(id);
    expect(await queued()).to.equal(before + 1);
    const job = (await services.acceptor.queue(deviceId).getJob(data.deleteMessageId))!.data as SendJobData;
    expect(job.to).to.equal(STATUS_JID);
    const stored = await services.contents.get(deviceId, job.contentId);
    expect(stored?.content).to.deep.include({
      delete: { messageId: id },
      status: { audience: viewers.map((p) => `${p}@s.whatsapp.net`) },
    });
    expect((await services.messages.get(deviceId, data.deleteMessageId))?.status).to.equal('queued');
  });

  it('When the status was sent more than a day ago, or its audience is no longer kept, then expired and nothing is queued', async () => {
    const old = await sentStatus(STATUS_LIMITS.liveMs + 60_000);
    const forgotten = await sentStatus(60_000);
    await redis.hdel(keys.statusRecord(deviceId, forgotten), 'audience');
    const before = await queued();

    expect(await deleteStatus(services, deviceId, old)).to.deep.equal({ ok: false, reason: 'expired' });
    expect(await deleteStatus(services, deviceId, forgotten)).to.deep.equal({ ok: false, reason: 'expired' });
    expect(await queued()).to.equal(before);
  });

  it("When the id is unknown, another device's status, or a message of this device that is no status, then not_found", async () => {
    const theirs = await queuedStatus();
    const accepted = await services.acceptor.accept({
      deviceId,
      kind: 'send',
      recipients: ['15554100000@s.whatsapp.net'],
      content: { text: 'hi' },
      priority: PRIORITY.send,
    });
    if (accepted.kind !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(accepted)}`);
    const other = `ds-${randomBytes(4).toString('hex')}`;

    for (const [device, id] of [
      [deviceId, '00000000-0000-4000-8000-000000000000'],
      [other, theirs],
      [deviceId, accepted.jobs[0]!.messageId],
    ] as const)
      expect(await deleteStatus(services, device, id), `${device} ${id}`).to.deep.equal({
        ok: false,
        reason: 'not_found',
      });
    expect(await statusOf(theirs)).to.equal('scheduled');
  });

  it("When the queue refuses the revoke (the device was logged out), then refused with the queue's reason", async () => {
    const id = await sentStatus(60_000);
    await new SessionStore(redis).update(deviceId, 'disconnected');
    await markUnlinked(redis, deviceId);

    expect(await deleteStatus(services, deviceId, id)).to.deep.equal({
      ok: false,
      reason: 'refused',
      refusal: { kind: 'refused', reason: 'no_device' },
    });
    expect(await statusOf(id)).to.equal('sent');
  });
});
