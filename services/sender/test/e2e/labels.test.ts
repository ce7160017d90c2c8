import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { useStack, waitFor, WebhookReceiver } from '@mgw/testing';

interface AppStateView {
  collections: Record<string, number>;
  labels: Record<string, { name: string; color?: number; deleted?: boolean }>;
  chatLabels: string[];
  chats: Record<string, { archived?: boolean; pinned?: boolean; mutedUntil?: number }>;
}

describe('e2e: labels and chat state — app-state patches both ways, label.* events (real client, simulator)', function () {
  this.timeout(180_000);
  const stack = useStack({
    // One process for the four services: lighter on a busy machine, the same code.
    allInOne: true,
    env: { ALLOWED_PRIVATE_HOSTS: '127.0.0.1', RATE_LIMIT_GROUPS: '1000' },
  });
  const account = '15551930001';
  const contact = '15551930011';
  const contactJid = `${contact}@s.whatsapp.net`;
  const other = '15551930012';
  let receiver: WebhookReceiver;
  /** The label made through POST /labels (the first test). */
  let apiLabelId = '';

  before(async () => {
    receiver = await WebhookReceiver.start();
    await stack().linkByQr(account);
    const hook = await stack().api<{ data: { secret: string } }>('PUT', '/webhook', { url: receiver.url });
    receiver.secrets = [hook.body.data.secret];
  });
  after(async () => {
    await receiver?.close();
  });
  const view = () => stack().simApi<AppStateView>('GET', `/accounts/${account}/app-state`);

  it('When the device has no app-state key yet, then a label request is 409; once the phone shared it, a label, a chat label and archive, pin and mute reach the phone as patches it verifies', async () => {
    const early = await stack().api('POST', '/labels', { name: 'VIP' });
    expect(early.status, JSON.stringify(early.body)).to.equal(409);
    expect(early.body.error).to.match(/no app-state key/);

    expect(await stack().simApi('POST', `/accounts/${account}/app-state/key-share`)).to.deep.equal({
      devices: 1,
    });
    let created: { status: number; body: { data: { label: { id: string } } } } | undefined;
    await waitFor(
      async () => {
        created = await stack().api('POST', '/labels', { name: 'VIP', color: 3 });
        return created.status === 200;
      },
      { timeoutMs: 15_000, what: 'the key at the device' },
    );
    const label = created!.body.data.label;
    apiLabelId = label.id;
    expect(label).to.deep.equal({ id: label.id, name: 'VIP', color: 3, deleted: false });
    expect(label.id).to.match(/^\d+$/);
    expect((await view()).labels[label.id]).to.deep.equal({ name: 'VIP', color: 3 });

    const put = await stack().api<{ data: unknown }>('POST', `/chats/${contact}/labels`, {
      labelId: label.id,
    });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect(put.body.data).to.deep.equal({ chat: contact, applied: true, labelId: label.id, labeled: true });
    expect((await view()).chatLabels).to.deep.equal([`${label.id}|${contactJid}`]);
    const off = await stack().api('DELETE', `/chats/${contact}/labels/${label.id}`);
    expect(off.status, JSON.stringify(off.body)).to.equal(200);
    expect((await view()).chatLabels).to.deep.equal([]);

    const state = await stack().api('PATCH', `/chats/${contact}`, {
      archived: true,
      pinned: true,
      muted: true,
      muteSeconds: 3600,
    });
    expect(state.status, JSON.stringify(state.body)).to.equal(200);
    const chat = (await view()).chats[contactJid]!;
    expect(chat).to.include({ archived: true, pinned: true });
    expect(chat.mutedUntil).to.be.within(Date.now() + 3_500_000, Date.now() + 3_700_000);
    expect((await view()).collections).to.deep.include({ regular: 3, regular_low: 2, regular_high: 1 });
  });

  it('When the phone creates a label and labels a chat, then label.edited and label.association arrive, sealed at rest', async () => {
    await stack().simApi('POST', `/accounts/${account}/labels`, {
      id: '5',
      name: 'From the phone',
      color: 7,
    });
    await stack().simApi('POST', `/accounts/${account}/chat-labels`, { labelId: '5', chat: contactJid });
    await waitFor(
      async () =>
        receiver.events('label.edited', (d) => (d.label as { id: string }).id === '5').length === 1 &&
        receiver.events('label.association', (d) => d.labelId === '5').length === 1,
      { timeoutMs: 20_000, what: 'the label events' },
    );
    expect(
      receiver.events('label.edited', (d) => (d.label as { id: string }).id === '5')[0]!.body.data,
    ).to.deep.include({
      label: { id: '5', name: 'From the phone', color: 7, deleted: false },
    });
    expect(receiver.events('label.association', (d) => d.labelId === '5')[0]!.body.data).to.deep.include({
      labelId: '5',
      chat: contact,
      labeled: true,
    });
    const log = JSON.stringify(await stack().redis.xrange(keys.eventLog(stack().deviceId), '-', '+'));
    expect(log).to.include('label.edited');
    expect(log).not.to.include('From the phone');
  });

  it('When labels are made on the phone and through the API and chats labelled both ways, then GET /labels and a label’s chats show them; a label deleted on the phone leaves', async () => {
    // The chat labelled through the API (the first test's label was taken off its chat again).
    const put = await stack().api('POST', `/chats/${other}/labels`, { labelId: apiLabelId });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    type Listed = { id: string; name: string; color: number; chats: number };
    const labels = async () =>
      (await stack().api<{ data: { total: number; labels: Listed[] } }>('GET', '/labels')).body.data;
    await waitFor(async () => (await labels()).labels.find((l) => l.id === apiLabelId)?.chats === 1, {
      timeoutMs: 20_000,
      what: "the API's label with its chat in GET /labels",
    });
    expect(await labels()).to.deep.equal({
      total: 2,
      labels: [
        { id: '5', name: 'From the phone', color: 7, chats: 1 },
        { id: apiLabelId, name: 'VIP', color: 3, chats: 1 },
      ].sort((a, b) => Number(a.id) - Number(b.id)),
    });
    const chatsOf = (id: string) =>
      stack().api<{ data: { labelId: string; chats: string[]; next: string | null } }>(
        'GET',
        `/labels/${id}/chats`,
      );
    expect((await chatsOf('5')).body.data).to.deep.equal({ labelId: '5', chats: [contact], next: null });
    expect((await chatsOf(apiLabelId)).body.data).to.deep.equal({
      labelId: apiLabelId,
      chats: [other],
      next: null,
    });
    // The name is sealed at rest.
    expect(JSON.stringify(await stack().redis.hgetall(keys.labels(stack().deviceId)))).not.to.include(
      'From the phone',
    );

    await stack().simApi('POST', `/accounts/${account}/labels`, {
      id: '5',
      name: 'From the phone',
      color: 7,
      deleted: true,
    });
    await waitFor(async () => !(await labels()).labels.some((l) => l.id === '5'), {
      timeoutMs: 20_000,
      what: 'the deleted label gone from GET /labels',
    });
    expect((await labels()).labels.map((l) => l.id)).to.deep.equal([apiLabelId]);
    expect((await chatsOf('5')).status).to.equal(404);
    expect(await stack().redis.exists(keys.labelChats(stack().deviceId, '5'))).to.equal(0);
  });

  it("When a label is renamed, recoloured and deleted through the API, then the phone has each change, GET /labels follows, and a chat's labels are read by chat", async () => {
    type ChatLabels = { data: { chatId: string; labels: { id: string; name: string; color: number }[] } };
    const ofChat = async (chat: string) =>
      (await stack().api<ChatLabels>('GET', `/chats/${chat}/labels`)).body;
    expect(await ofChat(other)).to.deep.equal({
      success: true,
      data: { chatId: other, labels: [{ id: apiLabelId, name: 'VIP', color: 3 }] },
    });
    expect((await ofChat(contact)).data.labels).to.deep.equal([]);

    const renamed = await stack().api<{ data: unknown }>('PATCH', `/labels/${apiLabelId}`, {
      name: 'Gold',
      color: 5,
    });
    expect(renamed.status, JSON.stringify(renamed.body)).to.equal(200);
    expect(renamed.body.data).to.deep.equal({
      label: { id: apiLabelId, name: 'Gold', color: 5, deleted: false },
    });
    expect((await view()).labels[apiLabelId]).to.deep.equal({ name: 'Gold', color: 5 });
    await waitFor(async () => (await ofChat(other)).data.labels[0]?.name === 'Gold', {
      timeoutMs: 20_000,
      what: 'the new name read back',
    });
    const recoloured = await stack().api('PATCH', `/labels/${apiLabelId}`, { color: 6 });
    expect(recoloured.status, JSON.stringify(recoloured.body)).to.equal(200);
    expect((await view()).labels[apiLabelId]).to.deep.equal({ name: 'Gold', color: 6 });

    // A label made for a chat and deleted: the chat loses it and keeps the other.
    const temp = await stack().api<{ data: { label: { id: string } } }>('POST', '/labels', { name: 'Temp' });
    expect(temp.status, JSON.stringify(temp.body)).to.equal(200);
    const tempId = temp.body.data.label.id;
    expect((await stack().api('POST', `/chats/${other}/labels`, { labelId: tempId })).status).to.equal(200);
    await waitFor(async () => (await ofChat(other)).data.labels.length === 2, {
      timeoutMs: 20_000,
      what: 'two labels on the chat',
    });
    const gone = await stack().api<{ data: { label: { deleted: boolean } } }>('DELETE', `/labels/${tempId}`);
    expect(gone.status, JSON.stringify(gone.body)).to.equal(200);
    expect(gone.body.data.label.deleted).to.equal(true);
    expect((await view()).labels[tempId]).to.include({ deleted: true });
    await waitFor(async () => (await ofChat(other)).data.labels.length === 1, {
      timeoutMs: 20_000,
      what: 'the deleted label off its chat',
    });
    expect((await ofChat(other)).data.labels.map((l) => l.id)).to.deep.equal([apiLabelId]);
    const labels = await stack().api<{ data: { labels: { id: string }[] } }>('GET', '/labels');
    expect(labels.body.data.labels.map((l) => l.id)).not.to.include(tempId);

    for (const [method, body] of [
      ['PATCH', { name: 'x' }],
      ['DELETE', undefined],
    ] as const) {
      const unknown = await stack().api(method, `/labels/${tempId}`, body);
      expect(unknown.status, method).to.equal(404);
      expect(unknown.body).to.deep.equal({ success: false, error: 'Unknown label' });
    }
  });

  it('When a label is created and at once renamed, labelled on a chat, read and deleted, then each answer reads what the one before wrote', async () => {
    // Each change answers once the device's label store holds it: no wait between the requests.
    for (let round = 0; round < 3; round++) {
      const made = await stack().api<{ data: { label: { id: string } } }>('POST', '/labels', {
        name: `Quick ${round}`,
      });
      expect(made.status, JSON.stringify(made.body)).to.equal(200);
      const id = made.body.data.label.id;
      const renamed = await stack().api('PATCH', `/labels/${id}`, { name: `Quick ${round}b` });
      expect(renamed.status, JSON.stringify(renamed.body)).to.equal(200);
      const put = await stack().api('POST', `/chats/${other}/labels`, { labelId: id });
      expect(put.status, JSON.stringify(put.body)).to.equal(200);
      const chats = await stack().api<{ data: { chats: string[] } }>('GET', `/labels/${id}/chats`);
      expect(chats.body.data.chats, JSON.stringify(chats.body)).to.include(other);
      const listed = await stack().api<{ data: { labels: { id: string; name: string }[] } }>(
        'GET',
        '/labels',
      );
      expect(listed.body.data.labels.find((l) => l.id === id)?.name).to.equal(`Quick ${round}b`);
      const gone = await stack().api('DELETE', `/labels/${id}`);
      expect(gone.status, JSON.stringify(gone.body)).to.equal(200);
      const again = await stack().api('DELETE', `/labels/${id}`);
      expect(again.status, JSON.stringify(again.body)).to.equal(404);
    }
  });

  it("When the phone unarchives, unpins and mutes a chat, then unmutes it, then chat.updated events tell each change (this device's own changes too)", async () => {
    type Event = { type: string; data: Record<string, unknown> };
    const changes = async () =>
      (
        await stack().api<{ data: { events: Event[] } }>('GET', '/events?types=chat.updated')
      ).body.data.events.map((e) => e.data);
    const deviceId = stack().deviceId;
    // The first test's PATCH /chats/:chatId (archived, pinned, muted) came back as events too.
    const own = Object.assign({}, ...(await changes()).filter((d) => d.chat === contact)) as Record<
      string,
      unknown
    >;
    expect(own).to.include({ deviceId, chat: contact, archived: true, pinned: true });
    expect(own.mutedUntil).to.be.a('string');

    // Baileys folds the changes it reads together into one update per chat: what counts is the
    // state the events add up to, each field as the phone left it.
    const before = (await changes()).length;
    const stateSince = async () =>
      Object.assign({}, ...(await changes()).slice(before)) as Record<string, unknown>;
    const until = Date.now() + 3_600_000;
    await stack().simApi('POST', `/accounts/${account}/chat-state`, {
      chat: contactJid,
      archived: false,
      pinned: false,
      mutedUntil: until,
    });
    const muted = {
      deviceId,
      chat: contact,
      archived: false,
      pinned: false,
      mutedUntil: new Date(until).toISOString(),
    };
    await waitFor(async () => JSON.stringify(await stateSince()) === JSON.stringify(muted), {
      timeoutMs: 20_000,
      what: 'unarchived, unpinned and muted',
    });
    await stack().simApi('POST', `/accounts/${account}/chat-state`, { chat: contactJid, mutedUntil: null });
    await waitFor(async () => (await stateSince()).mutedUntil === null, {
      timeoutMs: 20_000,
      what: 'unmuted',
    });
    expect(await stateSince()).to.deep.equal({ ...muted, mutedUntil: null });
  });

  it('When the input is wrong, then 400 naming the field', async () => {
    for (const [method, path, body, field] of [
      ['POST', '/labels', { name: ' ' }, 'name'],
      ['POST', '/labels', { name: 'x', color: 20 }, 'color'],
      ['POST', `/chats/${contact}/labels`, { labelId: 'abc' }, 'labelId'],
      ['POST', '/chats/not-a-chat/labels', { labelId: '5' }, 'chatId'],
      ['DELETE', `/chats/${contact}/labels/x`, undefined, 'labelId'],
      ['PATCH', '/labels/5', {}, 'name'],
      ['PATCH', '/labels/5', { color: 99 }, 'color'],
      ['PATCH', '/labels/x', { name: 'y' }, 'labelId'],
      ['GET', '/chats/not-a-chat/labels', undefined, 'chatId'],
      ['PATCH', `/chats/${contact}`, {}, 'archived'],
      ['PATCH', `/chats/${contact}`, { muted: true, muteSeconds: 5 }, 'muteSeconds'],
    ] as const) {
      const res = await stack().api<{ details?: unknown[] }>(method, path, body);
      expect(res.status, `${method} ${path}`).to.equal(400);
      expect(JSON.stringify(res.body), `${method} ${path}`).to.include(field);
    }
  });

  it('When the account logs out, then every label key of the device is gone', async () => {
    const deviceId = stack().deviceId;
    expect(await stack().redis.exists(keys.labels(deviceId), keys.labelIds(deviceId))).to.equal(2);
    const res = await stack().api<{ success: boolean }>('POST', '/disconnect');
    expect(res.body.success, JSON.stringify(res.body)).to.equal(true);
    await waitFor(
      async () => (await stack().api<{ status: string }>('GET', '/status')).body.status === 'disconnected',
      {
        what: 'logged out',
      },
    );
    await waitFor(
      async () =>
        (await stack().redis.exists(
          keys.labels(deviceId),
          keys.labelIds(deviceId),
          keys.labelChats(deviceId, apiLabelId),
        )) === 0,
      { what: 'the label keys removed' },
    );
    expect(await stack().redis.keys(`${keys.labels(deviceId)}*`)).to.deep.equal([]);
    expect((await stack().api('GET', '/labels')).status).to.equal(409);
  });
});
