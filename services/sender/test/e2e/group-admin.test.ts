import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { useStack, waitFor, WebhookReceiver } from '@mgw/testing';

interface SimGroupView {
  id: string;
  subject: string;
  description?: string;
  announce: boolean;
  locked: boolean;
  addressing: string;
  participants: { phone: string; lid: string; role: string }[];
}
interface Outcome {
  participant: string;
  ok: boolean;
  reason?: string;
  code?: string;
}
interface Detail {
  id: string;
  subject: string;
  description?: string;
  announce: boolean;
  locked: boolean;
  isAdmin: boolean;
  participants: { contact: { phone?: string; lid?: string }; admin: boolean }[];
}
type Data = Record<string, unknown>;

describe('e2e: group management — participants by phone and by LID, subject, description, settings, invite links, group.updated (real client, simulator)', function () {
  this.timeout(180_000);
  // One process for the four services: lighter on a busy machine, the same code.
  const stack = useStack({
    allInOne: true,
    // This suite makes more group requests than one window's default allows.
    env: { ALLOWED_PRIVATE_HOSTS: '127.0.0.1', RATE_LIMIT_GROUPS: '1000' },
  });
  const account = '15551910001';
  const [alice, bob, carol, dave] = ['15551910011', '15551910012', '15551910013', '15551910014'];
  let receiver: WebhookReceiver;
  /** Each one's LID, as the simulator made it. */
  const lids = new Map<string, string>();
  const lidOf = (phone: string) => lids.get(phone)!;

  before(async () => {
    receiver = await WebhookReceiver.start();
    await stack().linkByQr(account);
    const hook = await stack().api<{ data: { secret: string } }>('PUT', '/webhook', { url: receiver.url });
    receiver.secrets = [hook.body.data.secret];
    const everyone = await stack().simApi<SimGroupView>('POST', '/groups', {
      subject: 'Directory',
      members: [alice, bob, carol, dave, account],
    });
    for (const p of everyone.participants) lids.set(p.phone, p.lid);
  });
  after(async () => {
    await receiver?.close();
  });

  const participants = (id: string, action: string, who: string[]) =>
    stack().api<{ data: { participants: Outcome[] } }>('POST', `/groups/${id}/participants`, {
      action,
      participants: who,
    });
  const patch = (id: string, body: unknown) =>
    stack().api<{ data: { group: Detail }; error?: string; details?: unknown[] }>(
      'PATCH',
      `/groups/${id}`,
      body,
    );
  const updates = (id: string, type: string) =>
    receiver
      .events('group.updated', (d) => d.id === id && (d.change as Data).type === type)
      .map((e) => e.body.data);
  const waitUpdate = async (id: string, type: string, count: number) => {
    await waitFor(async () => updates(id, type).length >= count, {
      timeoutMs: 20_000,
      what: `${count} group.updated ${type} of ${id}`,
    });
    return updates(id, type);
  };

  for (const addressing of ['pn', 'lid'] as const)
    it(`When the account (an admin) adds, promotes, demotes and removes members of a ${addressing === 'lid' ? 'LID' : 'phone'}-addressed group, by phone and by LID, then each answer says ok`, async () => {
      const group = await stack().simApi<SimGroupView>('POST', '/groups', {
        subject: `Admins ${addressing}`,
        members: [account, alice],
        addressing,
      });
      const add = await participants(group.id, 'add', [bob, lidOf(carol)]);
      expect(add.status, JSON.stringify(add.body)).to.equal(200);
      expect(add.body.data.participants).to.deep.equal([
        { participant: bob, ok: true },
        { participant: lidOf(carol), ok: true },
      ]);
      const again = await participants(group.id, 'add', [bob]);
      expect(again.body.data.participants).to.deep.equal([
        { participant: bob, ok: false, reason: 'already_member', code: '409' },
      ]);
      for (const action of ['promote', 'demote', 'remove']) {
        const res = await participants(group.id, action, [bob, lidOf(carol)]);
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        expect(res.body.data.participants, action).to.deep.equal([
          { participant: bob, ok: true },
          { participant: lidOf(carol), ok: true },
        ]);
      }
      const gone = await participants(group.id, 'remove', [dave]);
      expect(gone.body.data.participants).to.deep.equal([
        { participant: dave, ok: false, reason: 'not_member', code: '404' },
      ]);
      const view = await stack().simApi<SimGroupView>('GET', `/groups/${group.id}`);
      expect(view.participants.map((p) => p.phone)).to.deep.equal([account, alice]);
      // Our own changes come back as WhatsApp's notifications: group.updated, marked byAccount.
      const joined = await waitUpdate(group.id, 'participants', 4);
      const add1 = joined.find((d) => (d.change as Data).action === 'joined')!;
      expect(add1.byAccount).to.equal(true);
      expect((add1.change as { participants: Data[] }).participants).to.deep.equal([
        { phone: bob, lid: lidOf(bob) },
        { phone: carol, lid: lidOf(carol) },
      ]);
    });

  it('When the account changes the subject, description and settings, then the group shows them, members are told, and the events are sealed at rest', async () => {
    const group = await stack().simApi<SimGroupView>('POST', '/groups', {
      subject: 'Before',
      members: [account, alice, bob],
      addressing: 'lid',
    });
    const changed = await patch(group.id, {
      subject: 'After',
      description: 'Our rules',
      announce: true,
      locked: true,
    });
    expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
    expect(changed.body.data.group).to.include({
      id: group.id,
      subject: 'After',
      description: 'Our rules',
      announce: true,
      locked: true,
      isAdmin: true,
    });
    expect(await stack().simApi<SimGroupView>('GET', `/groups/${group.id}`)).to.include({
      subject: 'After',
      description: 'Our rules',
      announce: true,
      locked: true,
    });
    const removed = await patch(group.id, { description: '', announce: false });
    expect(removed.status).to.equal(200);
    expect(removed.body.data.group).not.to.have.property('description');
    expect(removed.body.data.group.announce).to.equal(false);

    const [subject] = await waitUpdate(group.id, 'subject', 1);
    expect(subject).to.deep.include({ byAccount: true, change: { type: 'subject', subject: 'After' } });
    expect(subject!.author).to.deep.equal({ phone: account, lid: lidOf(account) });
    const descriptions = await waitUpdate(group.id, 'description', 2);
    expect(descriptions.map((d) => d.change)).to.deep.equal([
      { type: 'description', description: 'Our rules' },
      { type: 'description' },
    ]);
    expect((await waitUpdate(group.id, 'announce', 2)).map((d) => d.change)).to.deep.equal([
      { type: 'announce', announce: true },
      { type: 'announce', announce: false },
    ]);
    expect((await waitUpdate(group.id, 'locked', 1))[0]!.change).to.deep.equal({
      type: 'locked',
      locked: true,
    });
    // The subject and description are the members' text: sealed in the event log.
    const log = JSON.stringify(await stack().redis.xrange(keys.eventLog(stack().deviceId), '-', '+'));
    expect(log).to.include('group.updated');
    expect(log).not.to.include('Our rules');
    const events = await stack().api<{ data: { events: { type: string; data: Data }[] } }>(
      'GET',
      '/events?types=group.updated',
    );
    expect(events.status, JSON.stringify(events.body)).to.equal(200);
    expect(events.body.data.events.some((e) => (e.data.change as Data).subject === 'After')).to.equal(true);

    const bad = await patch(group.id, { subject: '  ' });
    expect(bad.status).to.equal(400);
    expect(JSON.stringify(bad.body.details)).to.include('subject');
    expect((await patch(group.id, {})).status).to.equal(400);
    expect((await patch(group.id, { announce: 'yes' })).status).to.equal(400);
  });

  it('When the account is not an admin, or not in the group, then a change is 403 or 404 and nothing changes', async () => {
    const theirs = await stack().simApi<SimGroupView>('POST', '/groups', {
      subject: 'Theirs',
      members: [alice, account, bob],
    });
    const settings = await patch(theirs.id, { announce: true });
    expect(settings.status).to.equal(403);
    expect(settings.body).to.deep.equal({ success: false, error: 'Only an admin of the group may do this' });
    // A member may change the subject of a group that is not locked.
    expect((await patch(theirs.id, { subject: 'Ours too' })).status).to.equal(200);
    await stack().simApi('POST', `/groups/${theirs.id}/settings`, { by: alice, locked: true });
    await waitUpdate(theirs.id, 'locked', 1);
    const locked = await patch(theirs.id, { subject: 'Not now' });
    expect(locked.status, JSON.stringify(locked.body)).to.equal(403);
    const invite = await stack().api('GET', `/groups/${theirs.id}/invite`);
    expect(invite.status).to.equal(403);
    expect((await stack().simApi<SimGroupView>('GET', `/groups/${theirs.id}`)).subject).to.equal('Ours too');

    const outside = await stack().simApi<SimGroupView>('POST', '/groups', {
      subject: 'Outside',
      members: [alice, bob],
    });
    for (const res of [
      await patch(outside.id, { subject: 'x' }),
      await stack().api('GET', `/groups/${outside.id}/invite`),
      await stack().api('POST', `/groups/${outside.id}/invite/revoke`),
    ]) {
      expect(res.status, JSON.stringify(res.body)).to.equal(404);
      expect(res.body).to.deep.equal({ success: false, error: 'Group not found' });
    }
  });

  it('When the account reads and revokes its invite link, then a contact joins by it, the old one stops working, and the account joins another group by link or code', async () => {
    const ours = await stack().simApi<SimGroupView>('POST', '/groups', {
      subject: 'Open house',
      members: [account, alice],
    });
    const first = await stack().api<{ data: { invite: { id: string; code: string; link: string } } }>(
      'GET',
      `/groups/${ours.id}/invite`,
    );
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    const { code } = first.body.data.invite;
    expect(first.body.data.invite).to.deep.equal({
      id: ours.id,
      code,
      link: `https://chat.whatsapp.com/${code}`,
    });
    const same = await stack().api<{ data: { invite: { code: string } } }>(
      'GET',
      `/groups/${ours.id}/invite`,
    );
    expect(same.body.data.invite.code).to.equal(code);
    await stack().simApi('POST', '/groups/join', { phone: bob, code });
    const [joined] = await waitUpdate(ours.id, 'participants', 1);
    expect(joined).to.deep.include({ byAccount: false });
    expect(joined!.change).to.deep.equal({
      type: 'participants',
      action: 'joined',
      participants: [{ phone: bob, lid: lidOf(bob) }],
    });

    const revoked = await stack().api<{ data: { invite: { code: string } } }>(
      'POST',
      `/groups/${ours.id}/invite/revoke`,
    );
    expect(revoked.status).to.equal(200);
    expect(revoked.body.data.invite.code).not.to.equal(code);
    expect(await waitUpdate(ours.id, 'invite_revoked', 1)).to.have.length(1);
    expect(JSON.stringify(updates(ours.id, 'invite_revoked'))).not.to.include(revoked.body.data.invite.code);
    let refused = '';
    await stack()
      .simApi('POST', '/groups/join', { phone: carol, code })
      .catch((err: Error) => (refused = err.message));
    expect(refused).to.include('410');

    // The account joins someone else's group: by the whole link, then (already in) by the code.
    const theirs = await stack().simApi<SimGroupView>('POST', '/groups', {
      subject: 'Their club',
      members: [alice, bob],
    });
    const link = await stack().simApi<{ code: string }>('POST', `/groups/${theirs.id}/invite`, { by: alice });
    const byLink = await stack().api<{ data: { group: Detail } }>('POST', '/groups/join', {
      code: `https://chat.whatsapp.com/${link.code}`,
    });
    expect(byLink.status, JSON.stringify(byLink.body)).to.equal(200);
    expect(byLink.body.data.group).to.include({ id: theirs.id, subject: 'Their club', isAdmin: false });
    expect(byLink.body.data.group.participants.map((p) => p.contact.phone)).to.include(account);
    const byCode = await stack().api<{ data: { group: Detail } }>('POST', '/groups/join', {
      code: link.code,
    });
    expect(byCode.status).to.equal(200);
    const old = await stack().api('POST', '/groups/join', { code });
    expect(old.status).to.equal(404);
    expect(old.body).to.deep.equal({ success: false, error: 'Invite link not found or revoked' });
    const unknown = await stack().api('POST', '/groups/join', { code: 'AAAAAAAAAAAAAAAAAAAAAA' });
    expect(unknown.status).to.equal(404);
    const bad = await stack().api<{ details: unknown[] }>('POST', '/groups/join', {
      code: 'https://evil.example/abc',
    });
    expect(bad.status).to.equal(400);
    expect(JSON.stringify(bad.body.details)).to.include('code');
  });

  it('When another member changes the group (subject, description, settings, members) or leaves, then group.updated tells each change and who made it', async () => {
    const group = await stack().simApi<SimGroupView>('POST', '/groups', {
      subject: 'Elsewhere',
      members: [alice, account, bob],
      addressing: 'lid',
    });
    await stack().simApi('POST', `/groups/${group.id}/subject`, { by: bob, subject: 'Renamed by Bob' });
    await stack().simApi('POST', `/groups/${group.id}/description`, { by: alice, description: 'New rules' });
    await stack().simApi('POST', `/groups/${group.id}/settings`, { by: alice, announce: true, locked: true });
    await stack().simApi('POST', `/groups/${group.id}/participants`, {
      by: alice,
      action: 'add',
      participants: [carol],
    });
    await stack().simApi('POST', `/groups/${group.id}/participants`, {
      by: alice,
      action: 'promote',
      participants: [account],
    });
    await stack().simApi('POST', `/groups/${group.id}/participants`, {
      by: alice,
      action: 'demote',
      participants: [account],
    });
    await stack().simApi('POST', `/groups/${group.id}/participants`, {
      by: alice,
      action: 'remove',
      participants: [carol],
    });
    await stack().simApi('POST', `/groups/${group.id}/leave`, { phone: bob });

    const bobAuthor = { phone: bob, lid: lidOf(bob) };
    const aliceAuthor = { phone: alice, lid: lidOf(alice) };
    const [subject] = await waitUpdate(group.id, 'subject', 1);
    expect(subject).to.deep.include({
      id: group.id,
      author: bobAuthor,
      byAccount: false,
      change: { type: 'subject', subject: 'Renamed by Bob' },
    });
    expect((await waitUpdate(group.id, 'description', 1))[0]).to.deep.include({
      author: aliceAuthor,
      change: { type: 'description', description: 'New rules' },
    });
    expect((await waitUpdate(group.id, 'announce', 1))[0]!.change).to.deep.equal({
      type: 'announce',
      announce: true,
    });
    expect((await waitUpdate(group.id, 'locked', 1))[0]!.change).to.deep.equal({
      type: 'locked',
      locked: true,
    });
    const members = await waitUpdate(group.id, 'participants', 5);
    expect(
      members.map((d) => [
        (d.change as Data).action,
        (d.change as { participants: { phone: string; lid: string }[] }).participants.map(
          (p) => `${p.phone}|${p.lid}`,
        ),
        (d.author as { phone?: string }).phone,
      ]),
    ).to.deep.equal([
      ['joined', [`${carol}|${lidOf(carol)}`], alice],
      ['promoted', [`${account}|${lidOf(account)}`], alice],
      ['demoted', [`${account}|${lidOf(account)}`], alice],
      ['left', [`${carol}|${lidOf(carol)}`], alice],
      ['left', [`${bob}|${lidOf(bob)}`], bob],
    ]);
    // The group's cache followed: the account's view shows the new subject and members.
    const detail = await stack().api<{ data: { group: Detail } }>('GET', `/groups/${group.id}`);
    expect(detail.body.data.group).to.include({ subject: 'Renamed by Bob', announce: true, locked: true });
    expect(detail.body.data.group.participants.map((p) => p.contact.phone)).to.deep.equal([alice, account]);
  });
});
