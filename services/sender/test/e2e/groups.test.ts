import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { keys } from '@mgw/contracts';
import { useStack, waitFor, WebhookReceiver, type InboxMessage } from '@mgw/testing';

interface SimGroupView {
  id: string;
  subject: string;
  announce: boolean;
  addressing: string;
  participants: { phone: string; lid: string; role: string }[];
  metadataQueries: number;
}

describe('e2e: groups — list, send with mentions, the metadata cache, inbound, management, announce groups (real client, simulator)', function () {
  this.timeout(180_000);
  const stack = useStack({ notifier: true, env: { ALLOWED_PRIVATE_HOSTS: '127.0.0.1' } });
  const account = '15551900001';
  const members = ['15551900011', '15551900012', '15551900013', '15551900014', '15551900015'];
  let receiver: WebhookReceiver;
  let group: SimGroupView;

  before(async () => {
    receiver = await WebhookReceiver.start();
    await stack().linkByQr(account);
    const hook = await stack().api<{ data: { secret: string } }>('PUT', '/webhook', { url: receiver.url });
    receiver.secrets = [hook.body.data.secret];
    // members[0] created it: the account is a plain member.
    group = await stack().simApi<SimGroupView>('POST', '/groups', {
      subject: 'Team Alpha',
      members: [members[0], account, ...members.slice(1)],
      description: 'The five of us',
    });
  });
  after(async () => {
    await receiver?.close();
  });

  const sendAndSettle = async (body: Record<string, unknown>) => {
    const res = await stack().api<{ messageId: string }>('POST', '/send', body);
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    let record: Record<string, unknown> = {};
    await waitFor(
      async () => {
        const got = await stack().api<{ data: Record<string, unknown> }>(
          'GET',
          `/messages/${res.body.messageId}`,
        );
        expect(got.status, JSON.stringify(got.body)).to.equal(200);
        record = got.body.data;
        return record.status !== 'queued';
      },
      { timeoutMs: 30_000, what: 'group message leaves queued' },
    );
    return record;
  };
  const groupEntries = async (phone: string, id: string): Promise<InboxMessage[]> =>
    (await stack().inbox(phone)).filter((m) => m.id === id);

  it('When the account is in a group of 5, then GET /groups lists it and GET /groups/:id shows its members', async () => {
    const list = await stack().api<{ data: { groups: Record<string, unknown>[] } }>('GET', '/groups');
    expect(list.status, JSON.stringify(list.body)).to.equal(200);
    expect(list.body.data.groups).to.deep.equal([
      { id: group.id, subject: 'Team Alpha', size: 6, announce: false, isAdmin: false },
    ]);
    const one = await stack().api<{ data: { group: Record<string, unknown> } }>('GET', `/groups/${group.id}`);
    expect(one.status).to.equal(200);
    const detail = one.body.data.group as {
      participants: { contact: { phone: string; lid: string }; admin: boolean }[];
    };
    expect(detail).to.include({
      id: group.id,
      subject: 'Team Alpha',
      description: 'The five of us',
      size: 6,
    });
    expect(detail.participants).to.have.length(6);
    const creator = detail.participants.find((p) => p.contact.phone === members[0])!;
    expect(creator.admin).to.equal(true);
    expect(creator.contact.lid).to.equal(group.participants.find((p) => p.phone === members[0])!.lid);
    expect(detail.participants.find((p) => p.contact.phone === account)!.admin).to.equal(false);

    const unknown = await stack().api('GET', '/groups/120363999999999999@g.us');
    expect(unknown.status).to.equal(404);
    expect(unknown.body).to.deep.equal({ success: false, error: 'Group not found' });
    const bad = await stack().api<{ details: unknown[] }>('GET', '/groups/not-a-group');
    expect(bad.status).to.equal(400);
  });

  it('When a text with a mention is sent to the group, then each of the 5 members decrypts it once, with the mention', async () => {
    const record = await sendAndSettle({ to: group.id, text: `Hi @${members[1]}`, mentions: [members[1]] });
    expect(record.status, JSON.stringify(record)).to.equal('sent');
    expect(record.to).to.equal(group.id);
    expect(record.mentions, 'the record keeps whom it mentioned').to.deep.equal([members[1]]);
    for (const phone of members) {
      let got: InboxMessage[] = [];
      await waitFor(
        async () => (got = await groupEntries(phone, record.platformMessageId as string)).length === 1,
        {
          timeoutMs: 15_000,
          what: `group message at ${phone}`,
        },
      );
      expect(got[0]).to.include({
        from: account,
        groupId: group.id,
        type: 'text',
        text: `Hi @${members[1]}`,
      });
      expect(got[0]!.mentions).to.deep.equal([`${members[1]}@s.whatsapp.net`]);
      expect(got[0]!.duplicates).to.equal(undefined);
    }
    expect(await stack().simApi('GET', `/undecryptable/${members[0]}`)).to.deep.equal({ messages: [] });
  });

  it('When a one-to-one text and a caption carry mentions, then the contact sees them as mentions', async () => {
    const text = await sendAndSettle({ to: members[3], text: `ask @${members[4]}`, mentions: [members[4]] });
    expect(text.status, JSON.stringify(text)).to.equal('sent');
    const image = await sendAndSettle({
      to: members[3],
      attachment: {
        type: 'image',
        mimeType: 'image/jpeg',
        base64: randomBytes(256).toString('base64'),
        caption: `see @${members[4]}`,
      },
      mentions: [members[4], '123456789012345@lid'],
    });
    expect(image.status, JSON.stringify(image)).to.equal('sent');
    let got: InboxMessage[] = [];
    await waitFor(
      async () =>
        (got = (await stack().inbox(members[3]!)).filter(
          (m) => m.id === text.platformMessageId || m.id === image.platformMessageId,
        )).length === 2,
      { timeoutMs: 15_000, what: 'both one-to-one messages' },
    );
    const byId = new Map(got.map((m) => [m.id, m]));
    expect(byId.get(text.platformMessageId as string)).to.deep.include({
      text: `ask @${members[4]}`,
      mentions: [`${members[4]}@s.whatsapp.net`],
    });
    expect(byId.get(text.platformMessageId as string)!.groupId).to.equal(undefined);
    expect(byId.get(image.platformMessageId as string)).to.deep.include({
      type: 'image',
      caption: `see @${members[4]}`,
      mentions: [`${members[4]}@s.whatsapp.net`, '123456789012345@lid'],
    });
  });

  it('When an image and a reply are sent to the group, then every member gets the image and the reply quoting it', async () => {
    const image = await sendAndSettle({
      to: group.id,
      attachment: { type: 'image', mimeType: 'image/jpeg', base64: randomBytes(300).toString('base64') },
      text: 'the plan',
    });
    expect(image.status, JSON.stringify(image)).to.equal('sent');
    const reply = await sendAndSettle({
      to: group.id,
      text: 'as agreed',
      existingMessageId: image.messageId,
    });
    expect(reply.status, JSON.stringify(reply)).to.equal('sent');
    for (const phone of members) {
      await waitFor(async () => (await groupEntries(phone, reply.platformMessageId as string)).length === 1, {
        timeoutMs: 15_000,
        what: `reply at ${phone}`,
      });
      const [img] = await groupEntries(phone, image.platformMessageId as string);
      expect(img).to.include({ type: 'image', caption: 'the plan', groupId: group.id, fileLength: 300 });
      const [rep] = await groupEntries(phone, reply.platformMessageId as string);
      expect(rep).to.include({ text: 'as agreed', quotedId: image.platformMessageId, groupId: group.id });
    }
  });

  it('When 100 texts are sent to a group the gateway has not seen, then its metadata is asked of WhatsApp once and every member gets each once', async () => {
    // Not listed by GET /groups before: the cache starts cold for this group.
    const fresh = await stack().simApi<SimGroupView>('POST', '/groups', {
      subject: 'Cold cache',
      members: [members[0], account, ...members.slice(1)],
    });
    const listQueries = (
      await stack().simApi<{ participating: number }>('GET', `/accounts/${account}/group-queries`)
    ).participating;
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) {
      const r = await stack().api<{ messageId: string }>('POST', '/send', { to: fresh.id, text: `n${i}` });
      expect(r.status).to.equal(202);
      ids.push(r.body.messageId);
    }
    // Alone in a list, too.
    const listed = await stack().api<{ messageIds: string[] }>('POST', '/send', {
      to: [fresh.id],
      text: 'listed',
    });
    expect(listed.status).to.equal(202);
    await waitFor(
      async () => {
        const inbox = await stack().inbox(members[4]!);
        return inbox.filter((m) => m.groupId === fresh.id).length === 101;
      },
      { timeoutMs: 90_000, what: '101 group messages at the last member' },
    );
    const view = await stack().simApi<SimGroupView>('GET', `/groups/${fresh.id}`);
    expect(view.metadataQueries).to.equal(1);
    expect(
      (await stack().simApi<{ participating: number }>('GET', `/accounts/${account}/group-queries`))
        .participating,
    ).to.equal(listQueries);
    for (const phone of members) {
      const texts = (await stack().inbox(phone)).filter((m) => m.groupId === fresh.id);
      // Sends of one device may overlap: each arrives once, not necessarily in request order.
      expect(texts.map((m) => m.text).sort()).to.deep.equal([...ids.map((_, i) => `n${i}`), 'listed'].sort());
      expect(texts.every((m) => m.duplicates === undefined && m.from === account)).to.equal(true);
    }
  });

  it('When a member writes to the group, then message.received carries the group and the author, and a reply quoting it shows every member her words as hers', async () => {
    const sent = await stack().simApi<{ id: string }>('POST', `/groups/${group.id}/send`, {
      from: members[2],
      text: 'hello from the group',
    });
    await waitFor(
      async () => receiver.events('message.received', (d) => d.platformMessageId === sent.id).length === 1,
      {
        timeoutMs: 20_000,
        what: 'message.received of the group message',
      },
    );
    const data = receiver.events('message.received', (d) => d.platformMessageId === sent.id)[0]!.body
      .data as Record<string, unknown>;
    expect(data).to.include({ from: members[2], text: 'hello from the group' });
    expect(data.chat).to.deep.equal({ type: 'group', id: group.id, subject: 'Team Alpha' });
    expect((data.contact as { phone: string }).phone).to.equal(members[2]);
    const record = await stack().api<{ data: Record<string, unknown> }>(
      'GET',
      `/messages/${data.messageId as string}`,
    );
    // The group's subject is sealed at rest like the text.
    const raw = JSON.stringify(
      await stack().redis.hgetall(keys.message(stack().deviceId, data.messageId as string)),
    );
    expect(raw).not.to.include('Team Alpha');
    expect(raw).not.to.include('hello from the group');
    expect(record.body.data).to.deep.include({
      direction: 'inbound',
      chat: data.chat,
      text: 'hello from the group',
    });

    // The account answers in the group quoting the member: every member sees the quote as hers.
    const reply = await sendAndSettle({
      to: group.id,
      text: 'hello to you',
      existingMessageId: data.messageId,
    });
    expect(reply.status, JSON.stringify(reply)).to.equal('sent');
    for (const phone of members) {
      await waitFor(async () => (await groupEntries(phone, reply.platformMessageId as string)).length === 1, {
        timeoutMs: 15_000,
        what: `the quoting reply at ${phone}`,
      });
      const [got] = await groupEntries(phone, reply.platformMessageId as string);
      expect(got).to.include({
        text: 'hello to you',
        groupId: group.id,
        quotedId: sent.id,
        quotedText: 'hello from the group',
        quotedAuthor: `${members[2]}@s.whatsapp.net`,
      });
    }
  });

  it("When a group addresses its members by LID, then a send reaches each member and a member's message carries both phone and LID", async () => {
    const lidGroup = await stack().simApi<SimGroupView>('POST', '/groups', {
      subject: 'LID crew',
      members: [members[0], account, members[1], members[2]],
      addressing: 'lid',
    });
    const one = await stack().api<{
      data: { group: { participants: { contact: Record<string, string> }[] } };
    }>('GET', `/groups/${lidGroup.id}`);
    const lidOf = (phone: string) => lidGroup.participants.find((p) => p.phone === phone)!.lid;
    expect(one.body.data.group.participants.map((p) => p.contact)).to.deep.equal(
      [members[0]!, account, members[1]!, members[2]!].map((phone) => ({ phone, lid: lidOf(phone) })),
    );
    const record = await sendAndSettle({ to: lidGroup.id, text: 'by lid', mentions: [lidOf(members[1]!)] });
    expect(record.status, JSON.stringify(record)).to.equal('sent');
    for (const phone of [members[0]!, members[1]!, members[2]!]) {
      await waitFor(
        async () => (await groupEntries(phone, record.platformMessageId as string)).length === 1,
        {
          timeoutMs: 15_000,
          what: `LID group message at ${phone}`,
        },
      );
      const [got] = await groupEntries(phone, record.platformMessageId as string);
      expect(got).to.include({ text: 'by lid', groupId: lidGroup.id });
      expect(got!.mentions).to.deep.equal([lidOf(members[1]!)]);
    }
    const sent = await stack().simApi<{ id: string }>('POST', `/groups/${lidGroup.id}/send`, {
      from: members[2],
      text: 'lid hello',
    });
    await waitFor(
      async () => receiver.events('message.received', (d) => d.platformMessageId === sent.id).length === 1,
      {
        timeoutMs: 20_000,
        what: 'message.received of the LID group message',
      },
    );
    const data = receiver.events('message.received', (d) => d.platformMessageId === sent.id)[0]!.body
      .data as Record<string, unknown>;
    expect(data).to.include({ from: members[2], text: 'lid hello' });
    expect(data.contact).to.deep.equal({ phone: members[2], lid: lidOf(members[2]!) });
    expect(data.chat).to.deep.equal({ type: 'group', id: lidGroup.id, subject: 'LID crew' });
  });

  it("When our group text is edited and deleted, a member edits, reacts to and deletes in a LID group, and we react to a member's message, then members' phones and our records and events follow", async () => {
    const crew = await stack().simApi<SimGroupView>('POST', '/groups', {
      subject: 'Revisions',
      members: [members[3], account, members[4]],
      addressing: 'lid',
    });
    const lidOf = (phone: string) => crew.participants.find((p) => p.phone === phone)!.lid;
    const ours = await sendAndSettle({ to: crew.id, text: 'first draft' });
    expect(ours.status, JSON.stringify(ours)).to.equal('sent');
    const ourId = ours.messageId as string;
    const ourWaId = ours.platformMessageId as string;
    const edit = await stack().api('POST', '/send', {
      to: crew.id,
      edit: { messageId: ourId, text: 'final' },
    });
    expect(edit.status, JSON.stringify(edit.body)).to.equal(202);
    const shown = async (phone: string, check: (m: InboxMessage) => boolean, what: string) =>
      waitFor(async () => (await groupEntries(phone, ourWaId)).some(check), { timeoutMs: 15_000, what });
    for (const phone of [members[3]!, members[4]!])
      await shown(phone, (m) => m.editedText === 'final', `the edit at ${phone}`);

    // A member edits its own message, reacts to ours, then deletes its message.
    const theirs = await stack().simApi<{ id: string }>('POST', `/groups/${crew.id}/send`, {
      from: members[4],
      text: 'typo @us @them',
      mentions: [account, lidOf(members[3]!)],
    });
    await waitFor(
      async () => receiver.events('message.received', (d) => d.platformMessageId === theirs.id).length === 1,
      {
        timeoutMs: 20_000,
        what: 'the member message',
      },
    );
    const inboundId = receiver.events('message.received', (d) => d.platformMessageId === theirs.id)[0]!.body
      .data.messageId as string;
    const mentioned = [account, lidOf(members[3]!)];
    expect(
      receiver.events('message.received', (d) => d.platformMessageId === theirs.id)[0]!.body.data.mentions,
    ).to.deep.equal(mentioned);
    const kept = await stack().api<{ data: Record<string, unknown> }>('GET', `/messages/${inboundId}`);
    expect(kept.body.data.mentions, 'the record keeps whom it mentioned').to.deep.equal(mentioned);
    await stack().simApi('POST', `/groups/${crew.id}/send`, {
      from: members[4],
      edit: { id: theirs.id, text: 'fixed' },
    });
    await stack().simApi('POST', `/groups/${crew.id}/send`, {
      from: members[4],
      reaction: { id: ourWaId, emoji: '👍' },
    });
    await waitFor(
      async () => receiver.events('message.edited', (d) => d.messageId === inboundId).length === 1,
      {
        timeoutMs: 20_000,
        what: "the member's edit",
      },
    );
    const edited = receiver.events('message.edited', (d) => d.messageId === inboundId)[0]!.body.data;
    expect(edited).to.include({ direction: 'inbound', from: members[4], text: 'fixed' });
    expect(edited.contact).to.deep.equal({ phone: members[4], lid: lidOf(members[4]!) });
    await waitFor(
      async () => receiver.events('message.reaction', (d) => d.messageId === ourId).length === 1,
      {
        timeoutMs: 20_000,
        what: "the member's reaction",
      },
    );
    expect(receiver.events('message.reaction', (d) => d.messageId === ourId)[0]!.body.data).to.include({
      emoji: '👍',
    });

    // We react to the member's message in the group: the reaction names the member who wrote it.
    const wrongChat = await stack().api<{ success: boolean }>('POST', '/send', {
      to: members[4],
      reaction: { messageId: inboundId, emoji: '🎉' },
    });
    expect(wrongChat.status, 'a group message is reacted to in its group').to.equal(400);
    const react = await sendAndSettle({ to: crew.id, reaction: { messageId: inboundId, emoji: '🎉' } });
    expect(react.status, JSON.stringify(react)).to.equal('sent');
    await waitFor(
      async () =>
        (await stack().inbox(members[3]!)).some((m) => m.type === 'reaction' && m.targetId === theirs.id),
      { timeoutMs: 15_000, what: 'our reaction at a member' },
    );

    await stack().simApi('POST', `/groups/${crew.id}/send`, { from: members[4], delete: { id: theirs.id } });
    await waitFor(
      async () => receiver.events('message.deleted', (d) => d.messageId === inboundId).length === 1,
      {
        timeoutMs: 20_000,
        what: "the member's delete",
      },
    );
    const rec = await stack().api<{ data: Record<string, unknown> }>('GET', `/messages/${inboundId}`);
    expect(rec.body.data).to.have.property('deletedAt');
    expect(rec.body.data).not.to.have.property('text');

    const del = await stack().api('POST', '/send', { to: crew.id, delete: { messageId: ourId } });
    expect(del.status, JSON.stringify(del.body)).to.equal(202);
    for (const phone of [members[3]!, members[4]!])
      await shown(phone, (m) => m.deleted === true, `the delete at ${phone}`);
  });

  it('When the account creates a group, adds and removes members, then each answer says per participant what happened', async () => {
    const created = await stack().api<{
      data: { group: { id: string; isAdmin: boolean }; participants: unknown[] };
    }>('POST', '/groups', { subject: 'Made here', participants: [members[0], members[1]] });
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    const id = created.body.data.group.id;
    expect(created.body.data.group.isAdmin).to.equal(true);
    expect(created.body.data.participants).to.deep.equal([
      { participant: members[0], ok: true },
      { participant: members[1], ok: true },
    ]);
    const add = await stack().api<{ data: Record<string, unknown> }>('POST', `/groups/${id}/participants`, {
      action: 'add',
      participants: [members[2], members[0]],
    });
    expect(add.status).to.equal(200);
    expect(add.body.data).to.deep.equal({
      id,
      action: 'add',
      participants: [
        { participant: members[2], ok: true },
        { participant: members[0], ok: false, reason: 'already_member', code: '409' },
      ],
    });
    const remove = await stack().api<{ data: Record<string, unknown> }>(
      'POST',
      `/groups/${id}/participants`,
      {
        action: 'remove',
        participants: [members[1]],
      },
    );
    expect(remove.body.data).to.deep.equal({
      id,
      action: 'remove',
      participants: [{ participant: members[1], ok: true }],
    });
    const view = await stack().simApi<SimGroupView>('GET', `/groups/${id}`);
    expect(view.participants.map((p) => p.phone)).to.deep.equal([account, members[0], members[2]]);
    // The cache followed the notifications: the next read shows the new members.
    const detail = await stack().api<{ data: { group: { size: number } } }>('GET', `/groups/${id}`);
    expect(detail.body.data.group.size).to.equal(3);

    const invalid = await stack().api('POST', `/groups/${id}/participants`, {
      action: 'kick',
      participants: ['x'],
    });
    expect(invalid.status).to.equal(400);
    const left = await stack().api<{ data: Record<string, unknown> }>('POST', `/groups/${id}/leave`);
    expect(left.body.data).to.deep.equal({ id, left: true });
    const after = await stack().simApi<SimGroupView>('GET', `/groups/${id}`);
    expect(after.participants.map((p) => p.phone)).to.deep.equal([members[0], members[2]]);
  });

  it('When the account sends to an announce group where it is not admin, or to a group it is not in, then the message fails not_allowed_in_group', async () => {
    const announce = await stack().simApi<SimGroupView>('POST', '/groups', {
      subject: 'Announcements',
      members: [members[0], account, members[1]],
      announce: true,
    });
    const record = await sendAndSettle({ to: announce.id, text: 'may I?' });
    expect(record).to.include({ status: 'failed', error: 'not_allowed_in_group' });
    const outside = await stack().simApi<SimGroupView>('POST', '/groups', {
      subject: 'Not ours',
      members: [members[0], members[1]],
    });
    const other = await sendAndSettle({ to: outside.id, text: 'hello?' });
    expect(other).to.include({ status: 'failed', error: 'not_allowed_in_group' });
    for (const phone of [members[0]!, members[1]!])
      expect((await stack().inbox(phone)).some((m) => m.text === 'may I?' || m.text === 'hello?')).to.equal(
        false,
      );
  });
});
