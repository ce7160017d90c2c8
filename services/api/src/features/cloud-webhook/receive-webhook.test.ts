import { expect } from 'chai';
import { CLOUD_WEBHOOK_MAX_AGE_MS, createMetrics, newMessageId } from '@mgw/contracts';
import { MAX_NUMBERS_PER_DELIVERY, receiveWebhook, type ReceiveDeps } from './receive-webhook.js';
import { MemoryInbound, MemoryMessages, envelope, memoryDevices, signed } from './webhook-fixture.js';

describe('cloud-webhook: a delivery of Meta’s', () => {
  let messages: MemoryMessages;
  let inbound: MemoryInbound;
  let deps: ReceiveDeps;
  const metrics = createMetrics();
  const seconds = (ms: number) => String(Math.floor(ms / 1000));
  const text = (wamid = 'wamid.in1', atMs = Date.now()) => ({
    contacts: [{ profile: { name: 'Ann' }, wa_id: '15550102000' }],
    messages: [
      { from: '15550102000', id: wamid, timestamp: seconds(atMs), type: 'text', text: { body: 'hi' } },
    ],
  });
  /** POSTs the body signed with `secret` (null: with no signature header). */
  const post = (body: unknown, secret: string | null = 'secret-a') => {
    const raw = typeof body === 'string' ? body : JSON.stringify(body);
    return receiveWebhook(deps, Buffer.from(raw), secret === null ? undefined : signed(raw, secret));
  };

  beforeEach(() => {
    messages = new MemoryMessages();
    inbound = new MemoryInbound();
    deps = {
      devices: memoryDevices({
        '1001': { deviceId: 'd1', appSecret: 'secret-a' },
        '1002': { deviceId: 'd2', appSecret: 'secret-a' },
        '2001': { deviceId: 'd3', appSecret: 'secret-b' },
      }),
      statuses: { messages, metrics },
      messages: inbound.deps(metrics),
      metrics,
    };
  });

  it('When a signed delivery names a cloud number, then its events are applied to that device', async () => {
    const mine = newMessageId();
    messages.add('d1', mine, 'sent');
    const body = envelope('1001', {
      statuses: [
        {
          id: 'wamid.o',
          status: 'delivered',
          timestamp: seconds(Date.now()),
          recipient_id: '1',
          biz_opaque_callback_data: mine,
        },
      ],
      ...text(),
    });
    expect(await post(body)).to.equal('ok');
    expect(messages.status('d1', mine)).to.equal('delivered');
    expect([...inbound.recorded.keys()]).to.deep.equal(['d1/wamid.in1']);
  });

  it('When the signature is another app’s, missing or forged, then nothing is applied', async () => {
    expect(await post(envelope('1001', text()), 'secret-b')).to.equal('bad_signature');
    expect(await post(envelope('1001', text()), null)).to.equal('bad_signature');
    expect(
      await receiveWebhook(
        deps,
        Buffer.from(JSON.stringify(envelope('1001', text()))),
        `sha256=${'0'.repeat(64)}`,
      ),
    ).to.equal('bad_signature');
    expect(inbound.recorded.size).to.equal(0);
  });

  it('When one body names numbers of two apps, then no one app’s secret passes it', async () => {
    const body = {
      object: 'whatsapp_business_account',
      entry: [...envelope('1001', text()).entry, ...envelope('2001', text('wamid.in2')).entry],
    };
    expect(await post(body, 'secret-a')).to.equal('bad_signature');
    expect(await post(body, 'secret-b')).to.equal('bad_signature');
    expect(inbound.recorded.size).to.equal(0);
    const sameApp = {
      object: 'whatsapp_business_account',
      entry: [...envelope('1001', text()).entry, ...envelope('1002', text('wamid.in2')).entry],
    };
    expect(await post(sameApp, 'secret-a')).to.equal('ok');
    expect([...inbound.recorded.keys()]).to.deep.equal(['d1/wamid.in1', 'd2/wamid.in2']);
  });

  it('When no number is a cloud device’s, then the delivery is dropped whole', async () => {
    expect(await post(envelope('9999', text()))).to.equal('unknown_number');
    expect(await post({ object: 'whatsapp_business_account', entry: [] })).to.equal('unknown_number');
    expect(inbound.recorded.size).to.equal(0);
  });

  it('When one number of a delivery is no cloud device’s, then the others’ events are applied and its own dropped', async () => {
    const body = {
      object: 'whatsapp_business_account',
      entry: [...envelope('1001', text()).entry, ...envelope('9999', text('wamid.in2')).entry],
    };
    expect(await post(body)).to.equal('ok');
    expect([...inbound.recorded.keys()]).to.deep.equal(['d1/wamid.in1']);
  });

  it('When the same body comes again, then it is a replay and changes nothing', async () => {
    const body = envelope('1001', text());
    expect(await post(body)).to.equal('ok');
    inbound.recorded.clear();
    expect(await post(body)).to.equal('replay');
    expect(inbound.recorded.size).to.equal(0);
  });

  it('When events are older than the bound, then they are dropped; a delivery of only those is stale', async () => {
    const old = Date.now() - CLOUD_WEBHOOK_MAX_AGE_MS - 60_000;
    expect(await post(envelope('1001', text('wamid.old', old)))).to.equal('stale');
    const mixed = envelope('1001', {
      messages: [...text('wamid.old2', old).messages, ...text('wamid.new').messages],
    });
    expect(await post(mixed)).to.equal('ok');
    expect([...inbound.recorded.keys()]).to.deep.equal(['d1/wamid.new']);
  });

  it('When the body is not Meta’s JSON, then it is malformed', async () => {
    for (const raw of ['', 'not json', '[]', 'null', '{"object":"page"}', '"whatsapp_business_account"'])
      expect(await post(raw), raw).to.equal('malformed');
    expect(await receiveWebhook(deps, Buffer.from([0xff, 0xfe, 0x7b]), undefined)).to.equal('malformed');
    let lookups = 0;
    const counted: ReceiveDeps = {
      ...deps,
      devices: { ...deps.devices, deviceOfNumber: (id) => (lookups++, deps.devices.deviceOfNumber(id)) },
    };
    const many = {
      object: 'whatsapp_business_account',
      entry: Array.from(
        { length: MAX_NUMBERS_PER_DELIVERY + 1 },
        (_, i) => envelope(String(1001 + i), {}).entry[0],
      ),
    };
    expect(await receiveWebhook(counted, Buffer.from(JSON.stringify(many)), undefined)).to.equal('malformed');
    expect(lookups, 'no lookup for a body naming too many numbers').to.equal(0);
  });

  it('When applying fails, then the body is forgotten, so Meta’s retry of it is taken', async () => {
    const body = envelope('1001', text());
    const failing: ReceiveDeps = {
      ...deps,
      messages: { ...deps.messages, inbound: { record: () => Promise.reject(new Error('redis away')) } },
    };
    const raw = JSON.stringify(body);
    await receiveWebhook(failing, Buffer.from(raw), signed(raw, 'secret-a')).then(
      () => expect.fail('expected the failure'),
      (err: Error) => expect(err.message).to.equal('redis away'),
    );
    expect(await post(body)).to.equal('ok');
    expect(inbound.recorded.size).to.equal(1);
  });
});
