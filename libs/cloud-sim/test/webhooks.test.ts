import { expect } from 'chai';
import { startCloudSim, type CloudSimHandle } from '../src/index.js';
import { NUMBER, USER, startReceiver, until } from './helpers.js';

type Payload = {
  object: string;
  entry: {
    id: string;
    changes: {
      field: string;
      value: Record<string, unknown> & {
        statuses?: {
          id: string;
          status: string;
          errors?: { code: number }[];
          biz_opaque_callback_data?: string;
        }[];
      };
    }[];
  }[];
};
const valueOf = (body: string) => (JSON.parse(body) as Payload).entry[0]!.changes[0]!.value;

describe('cloud-sim: webhooks over HTTP', function () {
  this.timeout(20_000);
  let sim: CloudSimHandle;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  const sendTemplate = async (to = USER, extra: Record<string, unknown> = {}) => {
    const response = await fetch(`${sim.url}/v21.0/1001/messages`, {
      method: 'POST',
      headers: { authorization: 'Bearer token-1', 'content-type': 'application/json' },
      body: JSON.stringify({
        messaging_product: 'whatsapp',
        to,
        type: 'template',
        template: { name: 'order_update', language: { code: 'en_US' } },
        ...extra,
      }),
    });
    expect(response.status).to.equal(200);
    return ((await response.json()) as { messages: { id: string }[] }).messages[0]!.id;
  };
  const statusesOf = (wamid: string) =>
    receiver
      .posts()
      .flatMap((p) => valueOf(p.body).statuses ?? [])
      .filter((s) => s.id === wamid)
      .map((s) => s.status);

  afterEach(async () => {
    await sim?.close();
    await receiver?.close();
  });

  it('When a callback is subscribed, then the simulator verifies it with the GET handshake; a wrong verify token refuses it', async () => {
    sim = await startCloudSim({ numbers: [NUMBER] });
    receiver = await startReceiver({ verifyToken: 'verify-me', appSecret: 'secret-1' });
    const refused = await fetch(`${sim.url}/control/webhooks`, {
      method: 'POST',
      body: JSON.stringify({ appId: 'app-1', callbackUrl: receiver.url, verifyToken: 'wrong' }),
    });
    expect(refused.status).to.equal(400);
    expect(((await refused.json()) as { error: string }).error).to.include('verification failed');
    const ok = await fetch(`${sim.url}/control/webhooks`, {
      method: 'POST',
      body: JSON.stringify({ appId: 'app-1', callbackUrl: receiver.url, verifyToken: 'verify-me' }),
    });
    expect(ok.status).to.equal(200);
    const handshake = receiver.received.filter((r) => r.method === 'GET').at(-1)!;
    const query = new URL(handshake.url, 'http://x').searchParams;
    expect(query.get('hub.mode')).to.equal('subscribe');
    expect(query.get('hub.verify_token')).to.equal('verify-me');
    expect(query.get('hub.challenge')).to.match(/^\d+$/);
  });

  it('When a message is accepted and marked delivered then read, then signed sent, delivered, read statuses arrive in order', async () => {
    sim = await startCloudSim({ numbers: [NUMBER] });
    receiver = await startReceiver({ verifyToken: 'v', appSecret: 'secret-1' });
    await sim.subscribe('app-1', receiver.url, 'v');
    const wamid = await sendTemplate();
    await until(() => statusesOf(wamid).length === 1, 5_000, 'the sent status');
    const delivered = await fetch(`${sim.url}/control/messages/${wamid}/status`, {
      method: 'POST',
      body: JSON.stringify({ status: 'delivered' }),
    });
    expect(delivered.status).to.equal(200);
    sim.markStatus(wamid, 'read');
    await sim.webhooksIdle();
    expect(statusesOf(wamid)).to.deep.equal(['sent', 'delivered', 'read']);
    for (const post of receiver.posts()) {
      expect(post.signed, 'the HMAC computed by the receiver').to.equal(true);
      const payload = JSON.parse(post.body) as Payload;
      expect(payload.object).to.equal('whatsapp_business_account');
      expect(payload.entry[0]!.id).to.equal('2001');
      expect(payload.entry[0]!.changes[0]!.field).to.equal('messages');
      expect(payload.entry[0]!.changes[0]!.value.metadata).to.deep.equal({
        display_phone_number: '15550100001',
        phone_number_id: '1001',
      });
    }
    const sent = valueOf(receiver.posts()[0]!.body).statuses![0]!;
    expect(sent).to.deep.include({
      recipient_id: USER,
      pricing: { billable: true, pricing_model: 'PMP', category: 'utility' },
    });
  });

  it('When a message is marked failed, then the failed status carries the errors array', async () => {
    sim = await startCloudSim({ numbers: [NUMBER] });
    receiver = await startReceiver({ verifyToken: 'v', appSecret: 'secret-1' });
    await sim.subscribe('app-1', receiver.url, 'v');
    const wamid = await sendTemplate();
    sim.markStatus(wamid, 'failed', { code: 131026, title: 'Message undeliverable' });
    await sim.webhooksIdle();
    const failed = receiver
      .posts()
      .flatMap((p) => valueOf(p.body).statuses ?? [])
      .find((s) => s.status === 'failed')!;
    expect(failed.errors![0]).to.include({ code: 131026 });
    expect(() => sim.markStatus(wamid, 'delivered')).to.throw(/cannot become/);
  });

  it('When a send carries biz_opaque_callback_data, then every status of that message carries it back, and no other', async () => {
    sim = await startCloudSim({ numbers: [NUMBER] });
    receiver = await startReceiver({ verifyToken: 'v', appSecret: 'secret-1' });
    await sim.subscribe('app-1', receiver.url, 'v');
    const tagged = await sendTemplate(USER, { biz_opaque_callback_data: 'msg-42' });
    const plain = await sendTemplate();
    sim.markStatus(tagged, 'read');
    sim.markStatus(plain, 'failed', { code: 131026 });
    await sim.webhooksIdle();
    const statuses = receiver.posts().flatMap((p) => valueOf(p.body).statuses ?? []);
    const ofTagged = statuses.filter((s) => s.id === tagged);
    expect(ofTagged.map((s) => [s.status, s.biz_opaque_callback_data])).to.deep.equal([
      ['sent', 'msg-42'],
      ['delivered', 'msg-42'],
      ['read', 'msg-42'],
    ]);
    const ofPlain = statuses.filter((s) => s.id === plain);
    expect(ofPlain.map((s) => s.status)).to.deep.equal(['sent', 'failed']);
    for (const status of ofPlain) expect(status).not.to.have.property('biz_opaque_callback_data');
  });

  it('When statuses are automatic, then delivered and read follow on their own', async () => {
    sim = await startCloudSim({ numbers: [NUMBER], autoStatuses: { deliveredAfterMs: 20, readAfterMs: 40 } });
    receiver = await startReceiver({ verifyToken: 'v', appSecret: 'secret-1' });
    await sim.subscribe('app-1', receiver.url, 'v');
    const wamid = await sendTemplate();
    await until(() => statusesOf(wamid).length === 3, 5_000, 'three statuses');
    expect(statusesOf(wamid)).to.deep.equal(['sent', 'delivered', 'read']);
  });

  it('When a user writes, then a signed inbound message arrives with the contact, and free-form may answer', async () => {
    sim = await startCloudSim({ numbers: [NUMBER] });
    receiver = await startReceiver({ verifyToken: 'v', appSecret: 'secret-1' });
    await sim.subscribe('app-1', receiver.url, 'v');
    const response = await fetch(`${sim.url}/control/numbers/1001/inbound`, {
      method: 'POST',
      body: JSON.stringify({ from: USER, text: 'Hallo ünïcødé 😀', name: 'Ann' }),
    });
    const { id } = (await response.json()) as { id: string };
    await sim.webhooksIdle();
    const value = valueOf(receiver.posts()[0]!.body);
    expect(receiver.posts()[0]!.signed).to.equal(true);
    expect(value.contacts).to.deep.equal([{ profile: { name: 'Ann' }, wa_id: USER }]);
    expect(value.messages).to.have.length(1);
    expect((value.messages as object[])[0]).to.deep.include({
      from: USER,
      id,
      type: 'text',
      text: { body: 'Hallo ünïcødé 😀' },
    });
    const reply = await fetch(`${sim.url}/v21.0/1001/messages`, {
      method: 'POST',
      headers: { authorization: 'Bearer token-1', 'content-type': 'application/json' },
      body: JSON.stringify({
        messaging_product: 'whatsapp',
        to: USER,
        text: { body: 'hi' },
        context: { message_id: id },
      }),
    });
    expect(reply.status).to.equal(200);
  });

  it('When the endpoint fails, then the event is retried a bounded number of times, then given up; the next one still goes', async () => {
    sim = await startCloudSim({ numbers: [NUMBER], webhookRetry: { delaysMs: [10, 10] } });
    receiver = await startReceiver({
      verifyToken: 'v',
      appSecret: 'secret-1',
      statuses: [500, 500, 500, 503, 200],
    });
    await sim.subscribe('app-1', receiver.url, 'v');
    const first = await sendTemplate();
    const second = await sendTemplate('15550102001');
    await sim.webhooksIdle();
    const [a, b] = sim.deliveries();
    expect(a).to.deep.include({ state: 'failed', attempts: [500, 500, 500] });
    expect(b).to.deep.include({ state: 'delivered', attempts: [503, 200] });
    expect(statusesOf(first)).to.deep.equal(['sent', 'sent', 'sent']);
    expect(statusesOf(second)).to.deep.equal(['sent', 'sent']);
  });

  it('When the endpoint is gone, then the attempts are counted as none answered and the event fails', async () => {
    sim = await startCloudSim({ numbers: [NUMBER], webhookRetry: { delaysMs: [10] } });
    receiver = await startReceiver({ verifyToken: 'v', appSecret: 'secret-1' });
    await sim.subscribe('app-1', receiver.url, 'v');
    await receiver.close();
    await sendTemplate();
    await sim.webhooksIdle();
    expect(sim.deliveries()[0]).to.deep.include({ state: 'failed', attempts: [0, 0] });
  });

  it('When no callback is subscribed, then events are recorded as unsubscribed', async () => {
    sim = await startCloudSim({ numbers: [NUMBER] });
    receiver = await startReceiver({ verifyToken: 'v', appSecret: 'secret-1' });
    await sendTemplate();
    await sim.webhooksIdle();
    const deliveries = await (await fetch(`${sim.url}/control/deliveries`)).json();
    expect(deliveries).to.have.length(1);
    expect((deliveries as { state: string }[])[0]!.state).to.equal('unsubscribed');
  });
});
