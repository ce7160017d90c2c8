import { expect } from 'chai';
import { USERNAME_ERRORS } from '@mgw/contracts';
import { WebhookReceiver, useStack, waitFor } from '@mgw/testing';

interface ContactView {
  phone: string;
  lid: string;
}
type Data = Record<string, unknown>;
interface Resolution {
  success: boolean;
  data: { username: string; status: string; contact?: Data };
  error?: string;
  details?: { path: (string | number)[]; message: string }[];
}

const ADMIN_TOKEN = 'usernames-admin-token-0123456789abcdef';

describe('e2e: WhatsApp usernames — resolve, send to @username, usernames on what contacts write (real services with the notifier, real Baileys client, simulator)', function () {
  this.timeout(180_000);
  const stack = useStack({
    notifier: true,
    sim: { receiptDelayMs: 50, readDelayMs: 150 },
    env: {
      ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
      ADMIN_API_TOKEN: ADMIN_TOKEN,
      WEBHOOK_RETRY_BASE_MS: '300',
      WEBHOOK_RETRY_MAX_MS: '1000',
      WEBHOOK_SWEEP_MS: '500',
    },
  });
  const account = '15550910001';
  let receiver: WebhookReceiver;
  let shop: ContactView;
  let vault: ContactView;
  let hidden: ContactView;

  before(async () => {
    receiver = await WebhookReceiver.start();
    await stack().linkByQr(account);
    const hook = await stack().api<{ data: { secret: string } }>('PUT', '/webhook', { url: receiver.url });
    expect(hook.status).to.equal(200);
    receiver.secrets = [hook.body.data.secret];
    shop = await stack().simApi<ContactView>('POST', '/contacts', {
      phone: '15550910002',
      username: 'alice.shop',
    });
    vault = await stack().simApi<ContactView>('POST', '/contacts', {
      phone: '15550910003',
      username: 'vault_42',
      usernamePin: '0420',
    });
    hidden = await stack().simApi<ContactView>('POST', '/contacts', {
      phone: '15550910004',
      username: 'quiet.one',
      hidePhone: true,
    });
  });
  after(async () => {
    await receiver?.close();
  });

  const resolve = (body: Data) => stack().api<Resolution>('POST', '/contacts/username', body);
  const usernameLookups = async () =>
    (await stack().simApi<{ count: number }>('GET', `/accounts/${account}/username-lookups`)).count;
  async function record(id: string): Promise<Data> {
    return (await stack().api<{ data: Data }>('GET', `/messages/${id}`)).body.data;
  }
  async function until(id: string, status: string): Promise<Data> {
    await waitFor(async () => (await record(id)).status === status, { what: `${id} ${status}` });
    return record(id);
  }
  const eventsOf = (messageId: string) =>
    receiver.accepted().filter((d) => d.body.data.messageId === messageId);

  it('When usernames are resolved, then a bad one says the rule it breaks, an unknown one is not_found, a guarded one needs its PIN (none or a wrong one) and with it is found, with its LID and phone', async () => {
    const bad = await resolve({ username: 'www.alice' });
    expect(bad.status).to.equal(400);
    expect(bad.body).to.deep.equal({
      success: false,
      error: 'Invalid request data',
      details: [
        {
          path: ['username'],
          message: 'username is not a WhatsApp username: it may not start with www. (rule: www_prefix)',
        },
      ],
    });
    expect((await resolve({ username: 'alice.shop', pin: '12' })).status).to.equal(400);
    expect(await usernameLookups(), 'nothing asked for a bad request').to.equal(0);

    const unknown = await resolve({ username: '@nobody.here' });
    expect(unknown.status, JSON.stringify(unknown.body)).to.equal(200);
    expect(unknown.body).to.deep.equal({
      success: true,
      data: { username: 'nobody.here', status: 'not_found' },
    });

    for (const pin of [undefined, '1111']) {
      const guarded = await resolve({ username: 'Vault_42', ...(pin ? { pin } : {}) });
      expect(guarded.body, String(pin)).to.deep.equal({
        success: true,
        data: { username: 'vault_42', status: 'pin_required' },
      });
    }
    const unlocked = await resolve({ username: 'vault_42', pin: '0420' });
    expect(unlocked.body).to.deep.equal({
      success: true,
      data: {
        username: 'vault_42',
        status: 'found',
        contact: { phone: vault.phone, lid: `${vault.lid}@lid`, username: 'vault_42' },
      },
    });
    const quiet = await resolve({ username: 'quiet.one' });
    expect(quiet.body.data).to.deep.equal({
      username: 'quiet.one',
      status: 'found',
      contact: { lid: `${hidden.lid}@lid`, username: 'quiet.one' },
    });
    expect(await usernameLookups()).to.equal(5);

    // The admin mirror, for the dashboard: the same answer for the device the path names.
    const admin = await stack().adminApi<Resolution>(
      ADMIN_TOKEN,
      'POST',
      `/devices/${stack().deviceId}/contacts/username`,
      { username: 'alice.shop' },
    );
    expect(admin.status, JSON.stringify(admin.body)).to.equal(200);
    expect(admin.body.data).to.deep.equal({
      username: 'alice.shop',
      status: 'found',
      contact: { phone: shop.phone, lid: `${shop.lid}@lid`, username: 'alice.shop' },
    });
  });

  it('When a resolved username is sent to, alone and in a list, then it goes to its LID without another lookup, arrives, and its record and events carry contact { lid, username }', async () => {
    const asked = await usernameLookups();
    const single = await stack().api<{ messageId: string }>('POST', '/send', {
      to: '@Vault_42',
      text: 'your order is ready',
    });
    expect(single.status, JSON.stringify(single.body)).to.equal(202);
    const read = await until(single.body.messageId, 'read');
    expect(read).to.include({ to: `${vault.lid}@lid` });
    expect(read.contact).to.deep.equal({ phone: vault.phone, lid: `${vault.lid}@lid`, username: 'vault_42' });
    expect((await stack().inbox(vault.phone)).map((m) => [m.id, m.text])).to.deep.equal([
      [read.platformMessageId, 'your order is ready'],
    ]);
    await waitFor(async () => eventsOf(single.body.messageId).some((d) => d.body.type === 'message.read'), {
      what: 'message.read',
    });
    for (const e of eventsOf(single.body.messageId))
      expect(e.body.data.contact, e.body.type).to.deep.equal({
        phone: vault.phone,
        lid: `${vault.lid}@lid`,
        username: 'vault_42',
      });

    const list = await stack().api<{ messageIds: string[] }>('POST', '/send', {
      to: ['@alice.shop', '@quiet.one', '15550910005'],
      text: 'spring sale',
    });
    expect(list.status, JSON.stringify(list.body)).to.equal(202);
    const [toShop, toQuiet, toPhone] = await Promise.all(list.body.messageIds.map((id) => until(id, 'read')));
    expect(toShop).to.include({ to: `${shop.lid}@lid` });
    expect(toShop!.contact).to.deep.equal({
      phone: shop.phone,
      lid: `${shop.lid}@lid`,
      username: 'alice.shop',
    });
    expect(toQuiet).to.include({ to: `${hidden.lid}@lid` });
    expect(toQuiet!.contact).to.deep.equal({ lid: `${hidden.lid}@lid`, username: 'quiet.one' });
    expect(toPhone).to.include({ to: '15550910005' });
    for (const [phone, rec] of [
      [shop.phone, toShop],
      [hidden.phone, toQuiet],
      ['15550910005', toPhone],
    ] as const)
      expect(
        (await stack().inbox(phone)).map((m) => [m.id, m.text]),
        phone,
      ).to.deep.include([rec!.platformMessageId, 'spring sale']);
    expect(await usernameLookups(), 'sent from the device’s map: no lookup').to.equal(asked);
  });

  it('When /send names usernames the device has not resolved, then an unguarded one is asked of WhatsApp and sent to, while an unknown or guarded one refuses the whole request (422, naming the entries) and nothing is queued', async () => {
    const fresh = await stack().simApi<ContactView>('POST', '/contacts', {
      phone: '15550910006',
      username: 'fresh.one',
    });
    await stack().simApi('POST', '/contacts', {
      phone: '15550910007',
      username: 'locked.box',
      usernamePin: '9876',
    });
    const asked = await usernameLookups();

    const refused = await stack().api<Resolution>('POST', '/send', {
      to: ['@fresh.one', '@locked.box', '@ghost.user'],
      text: 'hello',
    });
    expect(refused.status).to.equal(422);
    expect(refused.body).to.deep.equal({
      success: false,
      error: USERNAME_ERRORS.notFound,
      details: [
        {
          path: ['to', 1],
          message: '@locked.box: username_pin_required (resolve it with its PIN: POST /contacts/username)',
        },
        { path: ['to', 2], message: '@ghost.user: username_not_found' },
      ],
    });
    const onlyPin = await stack().api<Resolution>('POST', '/send', { to: '@locked.box', text: 'hello' });
    expect(onlyPin.status).to.equal(422);
    expect(onlyPin.body.error).to.equal(USERNAME_ERRORS.pinRequired);
    expect((await stack().inbox(fresh.phone)).length, 'nothing of the refused request was sent').to.equal(0);

    const sent = await stack().api<{ messageId: string }>('POST', '/send', {
      to: '@fresh.one',
      text: 'welcome',
    });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(202);
    const read = await until(sent.body.messageId, 'read');
    expect(read).to.include({ to: `${fresh.lid}@lid` });
    expect(read.contact).to.deep.include({ lid: `${fresh.lid}@lid`, username: 'fresh.one' });
    expect((await stack().inbox(fresh.phone)).map((m) => m.text)).to.deep.equal(['welcome']);
    // fresh.one, locked.box, ghost.user once each in the refused list, locked.box again, then
    // fresh.one was known: 4.
    expect((await usernameLookups()) - asked).to.equal(4);
  });

  it('When a contact with a username writes, then message.received and its record carry contact.username, and a reply to @username goes to it without a lookup', async () => {
    const writer = await stack().simApi<ContactView>('POST', '/contacts', {
      phone: '15550910008',
      username: 'chatty.cat',
      addressing: 'lid',
    });
    const { id } = await stack().simApi<{ id: string }>('POST', `/contacts/${writer.phone}/send`, {
      to: account,
      text: 'hi, it is me',
    });
    await waitFor(
      async () => receiver.events('message.received', (d) => d.platformMessageId === id).length > 0,
      { what: 'message.received' },
    );
    const got = receiver.events('message.received', (d) => d.platformMessageId === id)[0]!.body.data;
    expect(got.contact).to.deep.equal({
      phone: writer.phone,
      lid: `${writer.lid}@lid`,
      username: 'chatty.cat',
    });
    expect((await record(got.messageId as string)).contact).to.deep.equal({
      phone: writer.phone,
      lid: `${writer.lid}@lid`,
      username: 'chatty.cat',
    });

    const asked = await usernameLookups();
    const reply = await stack().api<{ messageId: string }>('POST', '/send', {
      to: '@chatty.cat',
      text: 'hello cat',
    });
    expect(reply.status, JSON.stringify(reply.body)).to.equal(202);
    const read = await until(reply.body.messageId, 'read');
    expect(read).to.include({ to: `${writer.lid}@lid` });
    expect((await stack().inbox(writer.phone)).map((m) => m.text)).to.deep.equal(['hello cat']);
    expect(await usernameLookups()).to.equal(asked);
  });
});
