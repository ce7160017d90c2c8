import { expect } from 'chai';
import type { SimulatorHandle } from '../../src/index.js';
import { startTestSimulator, simControl } from '@mgw/testing';

const [A, B, C] = ['15550004001', '15550004002', '15550004003'];

describe('messenger-sim: group control routes (the client side is services/sender/test/e2e/groups.test.ts)', () => {
  let sim: SimulatorHandle;
  const call = (method: string, path: string, body?: unknown) => simControl(sim)(method, path, body);

  before(async () => {
    sim = await startTestSimulator();
  });
  after(async () => {
    await sim.close();
  });

  it('When a group is created, then its view lists the creator as super admin, the admins and each member LID', async () => {
    const made = await call('POST', '/groups', { subject: 'Crew', members: [A, B, C], admins: [B] });
    expect(made.status).to.equal(200);
    expect(made.body.id).to.match(/^\d+@g\.us$/);
    const participants = made.body.participants as { phone: string; lid: string; role: string }[];
    expect(participants.map((p) => [p.phone, p.role])).to.deep.equal([
      [A, 'superadmin'],
      [B, 'admin'],
      [C, 'member'],
    ]);
    expect(participants.every((p) => /^\d+@lid$/.test(p.lid))).to.equal(true);
    const view = await call('GET', `/groups/${made.body.id as string}`);
    expect(view.body).to.deep.equal(made.body);
    expect(view.body.metadataQueries).to.equal(0);
  });

  it('When the input is wrong or the writer may not write, then 4xx with the reason', async () => {
    expect((await call('POST', '/groups', { subject: '', members: [A] })).status).to.equal(400);
    expect((await call('POST', '/groups', { subject: 'x', members: 'A' })).status).to.equal(400);
    expect((await call('GET', '/groups/120363000000000000@g.us')).status).to.equal(404);
    const g = (await call('POST', '/groups', { subject: 'News', members: [A, B], announce: true })).body;
    const id = g.id as string;
    expect((await call('POST', `/groups/${id}/send`, { from: C, text: 'hi' })).status).to.equal(409);
    const member = await call('POST', `/groups/${id}/send`, { from: B, text: 'hi' });
    expect(member).to.deep.equal({ status: 403, body: { error: 'only admins may write to this group' } });
    expect((await call('POST', `/groups/${id}/announce`, { announce: 'no' })).status).to.equal(400);
    expect((await call('POST', `/groups/${id}/announce`, { announce: false })).body.announce).to.equal(false);
    // Nobody with a linked device is in it: the message reaches no device.
    expect(await call('POST', `/groups/${id}/send`, { from: B, text: 'hi' })).to.deep.include({
      status: 200,
    });
  });

  it('When a member edits, deletes or reacts in a group, then only its own sent messages can be revised and each input is checked', async () => {
    const id = (await call('POST', '/groups', { subject: 'Edits', members: [A, B] })).body.id as string;
    const sent = await call('POST', `/groups/${id}/send`, { from: B, text: 'typo' });
    expect(sent.status).to.equal(200);
    const ownId = sent.body.id as string;
    expect(
      (await call('POST', `/groups/${id}/send`, { from: B, edit: { id: ownId, text: 'fixed' } })).status,
    ).to.equal(200);
    expect(
      (await call('POST', `/groups/${id}/send`, { from: A, delete: { id: ownId } })).status,
      "another member's",
    ).to.equal(409);
    expect(
      (await call('POST', `/groups/${id}/send`, { from: B, edit: { id: 'nope', text: 'x' } })).status,
    ).to.equal(409);
    expect(
      (await call('POST', `/groups/${id}/send`, { from: B, edit: { id: ownId, text: '' } })).status,
    ).to.equal(400);
    expect(
      (await call('POST', `/groups/${id}/send`, { from: B, delete: { id: 'x'.repeat(200) } })).status,
    ).to.equal(400);
    expect(
      (await call('POST', `/groups/${id}/send`, { from: B, reaction: { id: ownId, emoji: 5 } })).status,
    ).to.equal(400);
    expect(
      (await call('POST', `/groups/${id}/send`, { from: A, reaction: { id: ownId, emoji: '👍' } })).status,
    ).to.equal(200);
    expect((await call('POST', `/groups/${id}/send`, { from: B, delete: { id: ownId } })).status).to.equal(
      200,
    );
  });
});
