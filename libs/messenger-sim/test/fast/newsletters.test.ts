import { expect } from 'chai';
import type { SimulatorHandle } from '../../src/index.js';
import { type TestDevice, linkTestDevice, startTestSimulator } from '@mgw/testing';

const OWNER = '15550006001';
const FOLLOWER = '15550006002';

describe('messenger-sim: channels (newsletters) through Baileys’ w:mex queries', function () {
  this.timeout(60_000);
  let sim: SimulatorHandle;
  let owner: TestDevice;
  let follower: TestDevice;

  before(async () => {
    sim = await startTestSimulator();
    owner = await linkTestDevice(sim, OWNER);
    follower = await linkTestDevice(sim, FOLLOWER);
  });
  after(async () => {
    await owner?.end();
    await follower?.end();
    await sim?.close();
  });

  const refusal = async (work: Promise<unknown>): Promise<number> => {
    try {
      await work;
    } catch (err) {
      return (err as { output?: { statusCode?: number } }).output?.statusCode ?? -1;
    }
    return 0;
  };

  it('When the owner creates, a contact follows by invite, the owner updates and deletes, then each answers as WhatsApp does and only the owner may change it', async () => {
    const created = await owner.sock!.newsletterCreate('Spring Sale News', 'Offers every Monday');
    expect(created.id).to.match(/^\d+@newsletter$/);
    expect(created).to.include({
      name: 'Spring Sale News',
      description: 'Offers every Monday',
      subscribers: 0,
    });
    expect(created.invite).to.be.a('string').and.not.equal('');

    const byInvite = (await follower.sock!.newsletterMetadata('invite', created.invite!)) as unknown as {
      id: string;
      viewer_metadata: { role: string };
    };
    expect(byInvite.id).to.equal(created.id);
    expect(byInvite.viewer_metadata.role).to.equal('GUEST');
    await follower.sock!.newsletterFollow(created.id);
    const followed = (await follower.sock!.newsletterMetadata('jid', created.id)) as unknown as {
      thread_metadata: { subscribers_count: string };
      viewer_metadata: { role: string };
    };
    expect(followed.viewer_metadata.role).to.equal('SUBSCRIBER');
    expect(followed.thread_metadata.subscribers_count).to.equal('1');

    expect(await refusal(follower.sock!.newsletterUpdateName(created.id, 'Taken over'))).to.equal(403);
    await owner.sock!.newsletterUpdateName(created.id, 'Spring Sale');
    await owner.sock!.newsletterUpdateDescription(created.id, 'Offers every Friday');
    const updated = (await owner.sock!.newsletterMetadata('jid', created.id)) as unknown as {
      thread_metadata: { name: { text: string }; description: { text: string } };
      viewer_metadata: { role: string };
    };
    expect(updated.thread_metadata.name.text).to.equal('Spring Sale');
    expect(updated.thread_metadata.description.text).to.equal('Offers every Friday');
    expect(updated.viewer_metadata.role).to.equal('OWNER');

    await follower.sock!.newsletterUnfollow(created.id);
    expect(await refusal(follower.sock!.newsletterDelete(created.id))).to.equal(403);
    await owner.sock!.newsletterDelete(created.id);
    expect(await refusal(owner.sock!.newsletterMetadata('jid', created.id))).to.equal(404);
    expect(await refusal(owner.sock!.newsletterCreate('', null as unknown as string))).to.equal(400);
  });
});
