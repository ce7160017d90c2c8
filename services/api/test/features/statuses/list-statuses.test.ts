import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { keys, STATUS_LIMITS, type SendJobData } from '@mgw/contracts';
import { markLinked, SessionStore } from '@mgw/store';
import type { ApiServices } from '../../../src/api-services.js';
import { postStatus } from '../../../src/features/statuses/post-status.js';
import { listStatuses } from '../../../src/features/statuses/list-statuses.js';
import { openUseCaseServices, type UseCaseServices } from '../../helpers/use-case-services.js';

/**
 * The device's statuses without an API: the services over the run's Redis (no HTTP, no sender),
 * statuses posted through the send path, marked sent and viewed as the sender marks them.
 */
describe("listStatuses: the device's statuses of the day with their viewers (services, real Redis)", () => {
  let services: ApiServices;
  let redis: Redis;
  let deviceId: string;

  let opened: UseCaseServices;
  before(async () => {
    opened = await openUseCaseServices('list-statuses-test');
    ({ services, redis } = opened);
  });
  beforeEach(async () => {
    deviceId = `ls-${randomBytes(4).toString('hex')}`;
    await new SessionStore(redis).update(deviceId, 'connected');
    await markLinked(redis, deviceId);
  });
  afterEach(async () => services.acceptor.queue(deviceId).obliterate({ force: true }));
  after(() => opened.close());

  async function post(body: Parameters<typeof postStatus>[2]): Promise<string> {
    const accepted = await postStatus(services, deviceId, body);
    if (accepted.kind !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(accepted)}`);
    return accepted.messageId;
  }

  it('When a status is scheduled, then it is listed as scheduled: its list, kind, audience size and sendAt, no views yet', async () => {
    const sendAt = new Date(Date.now() + 3600_000).toISOString();
    const id = await post({ text: 'Tomorrow: sale', audience: ['15554000001', '15554000002'], sendAt });

    expect(await listStatuses(services, deviceId)).to.deep.equal([
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
    const job = (await services.acceptor.queue(deviceId).getJob(id))!.data as SendJobData;
    await services.messages.claim(job);
    const sentAt = new Date(Date.now() - 60_000);
    await services.messages.markSent(job, sentAt);
    const views = [
      {
        viewerJid: '123456789012345@lid',
        viewer: { lid: '123456789012345@lid' },
        at: new Date(Date.now() - 30_000),
      },
      { viewerJid: '15554000001@s.whatsapp.net', viewer: { phone: '15554000001' }, at: new Date() },
    ];
    for (const view of views) await services.statuses.recordView(deviceId, job.platformMessageId, view);

    const [listed, ...rest] = await listStatuses(services, deviceId);

    expect(rest).to.deep.equal([]);
    expect(listed).to.deep.equal({
      messageId: id,
      batchId: id,
      status: 'sent',
      kind: 'text',
      audienceSize: 2,
      sentAt: sentAt.toISOString(),
      expiresAt: new Date(sentAt.getTime() + STATUS_LIMITS.liveMs).toISOString(),
      views: 2,
      viewers: [
        { viewer: { lid: '123456789012345@lid' }, viewedAt: views[0]!.at.toISOString() },
        { viewer: { phone: '15554000001' }, viewedAt: views[1]!.at.toISOString() },
      ],
    });
  });

  it("When a status's message record is gone, then it is left out; another device's statuses are not listed", async () => {
    const kept = await post({ text: 'kept', audience: ['15554000001'] });
    const gone = await post({ text: 'gone', audience: ['15554000001'] });
    // Its message is gone as one past the retention is: no job, no record.
    await services.acceptor.queue(deviceId).remove(gone);
    await redis.del(keys.message(deviceId, gone));
    expect(await services.messages.get(deviceId, gone)).to.equal(undefined);
    const other = `ls-${randomBytes(4).toString('hex')}`;

    expect((await listStatuses(services, deviceId)).map((st) => st.messageId)).to.deep.equal([kept]);
    expect(await listStatuses(services, other)).to.deep.equal([]);
  });
});
