import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { WebhookReceiver, useStack, waitFor } from '@mgw/testing';

type Data = Record<string, unknown>;
interface ContactView {
  phone: string;
  lid: string;
}

/**
 * WhatsApp 2026 (whatsmeow fcbcaad5): a contact's edit sent secret-encrypted — a
 * `secretEncryptedMessage` (MESSAGE_EDIT) under the edited message's messageSecret — through the
 * real client and the simulator (`POST /contacts/:phone/revise` with `secret: true`). The gateway
 * keeps each inbound message's secret sealed on its record, opens the edit with it and records it
 * exactly as a plain edit: same record update, same `message.edited`. Harness as lid-contacts.test.ts.
 */
describe('e2e: contacts’ edits sent secret-encrypted (real services with the notifier, simulator)', function () {
  this.timeout(150_000);
  const stack = useStack({
    notifier: true,
    env: {
      ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
      WEBHOOK_RETRY_BASE_MS: '300',
      WEBHOOK_RETRY_MAX_MS: '1000',
      WEBHOOK_SWEEP_MS: '500',
    },
  });
  const account = '15550830001';
  let receiver: WebhookReceiver;

  before(async () => {
    receiver = await WebhookReceiver.start();
    await stack().linkByQr(account);
    const hook = await stack().api<{ data: { secret: string } }>('PUT', '/webhook', { url: receiver.url });
    expect(hook.status).to.equal(200);
    receiver.secrets = [hook.body.data.secret];
  });
  after(async () => {
    await receiver?.close();
  });

  async function contact(phone: string, extra: Data = {}): Promise<ContactView> {
    return stack().simApi<ContactView>('POST', '/contacts', { phone, ...extra });
  }
  /** The contact writes `text`; answers the message.received event's data. */
  async function writes(phone: string, text: string): Promise<Data> {
    const { id } = await stack().simApi<{ id: string }>('POST', `/contacts/${phone}/send`, {
      to: account,
      text,
    });
    const got = () => receiver.events('message.received', (d) => d.platformMessageId === id);
    await waitFor(async () => got().length > 0, { what: 'message.received' });
    return got()[0]!.body.data;
  }
  const revise = (phone: string, id: unknown, body: Data) =>
    stack().simApi('POST', `/contacts/${phone}/revise`, { to: account, id, ...body });
  async function edited(messageId: unknown): Promise<Data> {
    const of = () => receiver.events('message.edited', (d) => d.messageId === messageId);
    await waitFor(async () => of().length === 1, { what: `message.edited of ${String(messageId)}` });
    return of()[0]!.body.data;
  }
  const record = async (id: unknown) =>
    (await stack().api<{ data: Data }>('GET', `/messages/${String(id)}`)).body.data;
  const counted = async (status: string): Promise<number> => {
    const texts = await Promise.all(
      stack()
        .senders()
        .map(async (p) => (await fetch(`http://127.0.0.1:${p.metricsPort}/metrics`)).text()),
    );
    const re = new RegExp(`^mgw_messages_total\\{status="${status}"\\} (\\d+)$`, 'm');
    return texts.reduce((n, t) => n + Number(re.exec(t)?.[1] ?? 0), 0);
  };

  it('When a contact edits its message secret-encrypted, then the record and message.edited show the new text exactly as for a plain edit', async () => {
    const phone = (await contact('15550830002')).phone;
    const plain = await writes(phone, 'plain draft');
    const secret = await writes(phone, 'secret draft');
    // The messageSecret is kept on the record, sealed: not its 32 bytes in base64.
    const sealed = await stack().redis.hget(
      keys.message(stack().deviceId, String(secret.messageId)),
      'msgSecret',
    );
    expect(sealed).to.be.a('string').and.to.have.length.greaterThan(44);

    await revise(phone, plain.platformMessageId, { text: 'plain final' });
    await revise(phone, secret.platformMessageId, { text: 'secret final', secret: true });
    const byPlain = await edited(plain.messageId);
    const bySecret = await edited(secret.messageId);
    const shape = ({ messageId: _m, platformMessageId: _p, text: _t, editedAt: _e, ...rest }: Data) => rest;
    expect(shape(bySecret)).to.deep.equal(shape(byPlain));
    expect(bySecret).to.include({
      direction: 'inbound',
      from: phone,
      text: 'secret final',
      platformMessageId: secret.platformMessageId,
    });
    const rec = await record(secret.messageId);
    expect(rec).to.include({ text: 'secret final' });
    expect((rec.edits as { text: string }[]).map((e) => e.text)).to.deep.equal(['secret final']);
    // Redelivered or not, one edit is one event.
    expect(receiver.events('message.edited', (d) => d.messageId === secret.messageId)).to.have.length(1);
  });

  it('When the secret was stored under the contact’s other addressing (phone vs LID), then the edit still opens (both senders tried, whatsmeow e46d104e)', async () => {
    const lidChat = await contact('15550830003', { addressing: 'lid' });
    const first = await writes(lidChat.phone, 'lid draft');
    await revise(lidChat.phone, first.platformMessageId, {
      text: 'lid final',
      secret: true,
      origSender: 'phone',
    });
    expect(await edited(first.messageId)).to.include({ text: 'lid final', from: lidChat.phone });

    const hidden = await contact('15550830004', { hidePhone: true });
    const second = await writes(hidden.phone, 'hidden draft');
    await revise(hidden.phone, second.platformMessageId, { text: 'hidden final', secret: true });
    const got = await edited(second.messageId);
    expect(got).to.include({ text: 'hidden final' });
    expect(got).to.not.have.property('from');
    expect(await record(second.messageId)).to.include({ text: 'hidden final' });
  });

  it('When a secret edit names a message whose secret is gone (deleted for everyone), then it is counted undecryptable, logged without content, and changes nothing', async () => {
    const phone = (await contact('15550830005')).phone;
    const got = await writes(phone, 'soon deleted');
    await revise(phone, got.platformMessageId, {});
    await waitFor(async () => (await record(got.messageId)).status === 'deleted', { what: 'the delete' });
    const key = keys.message(stack().deviceId, String(got.messageId));
    expect(await stack().redis.hexists(key, 'msgSecret')).to.equal(0);
    const before = await counted('edited_undecryptable');
    await revise(phone, got.platformMessageId, { text: 'too late', secret: true });
    await waitFor(async () => (await counted('edited_undecryptable')) === before + 1, {
      what: 'the undecryptable edit counted',
    });
    expect(await record(got.messageId)).to.not.have.property('text');
    expect(receiver.events('message.edited', (d) => d.messageId === got.messageId)).to.have.length(0);
    const logs = stack()
      .senders()
      .flatMap((p) => p.output)
      .join('\n');
    expect(logs).to.include('secret-encrypted edit not decrypted');
    expect(logs).to.not.include('too late');
  });
});
