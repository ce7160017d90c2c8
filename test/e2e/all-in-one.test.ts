/**
 * The all-in-one process (`services/all-in-one`): api, connection, sender and notifier in one
 * Node process, against the simulator. The sandbox walk-through — link by QR, send, receipts, a
 * signed webhook for each — through that one process; one ops port for the four parts (every
 * metric family once, ready when every part is); every part's log lines name it; SIGTERM stops
 * the parts in order and exits 0.
 */
import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { WebhookReceiver, entryArgs, run, useStack, waitFor } from '@mgw/testing';

describe('e2e: the all-in-one process (api, connection, sender and notifier in one process, simulator)', function () {
  this.timeout(120_000);
  const stack = useStack({
    allInOne: true,
    sim: { receiptDelayMs: 0, readDelayMs: 50 },
    env: { ALLOWED_PRIVATE_HOSTS: '127.0.0.1', WEBHOOK_SWEEP_MS: '500' },
  });
  let receiver: WebhookReceiver;

  before(async () => {
    receiver = await WebhookReceiver.start();
  });
  after(async () => {
    await receiver?.close();
  });

  it('When it starts, then one process serves the API and one ops port answers /readyz and /metrics for all four parts, each metric family once', async () => {
    const s = stack();
    expect(s.processes.map((p) => p.name)).to.deep.equal(['all-in-one#0']);
    const [proc] = s.processes;
    const ops = `http://127.0.0.1:${proc!.metricsPort}`;
    expect((await fetch(`${ops}/readyz`)).status).to.equal(200);
    const text = await (await fetch(`${ops}/metrics`)).text();
    const families = text.split('\n').filter((l) => l.startsWith('# TYPE '));
    const names = families.map((l) => l.split(' ')[2]);
    expect(names.length).to.be.greaterThan(20);
    expect(
      names.filter((n, i) => names.indexOf(n) !== i),
      'metric families served twice',
    ).to.deep.equal([]);
    // One metric the api, the sender (its fleet) and the notifier each keep, and Node's own once.
    for (const family of [
      'mgw_http_requests_total',
      'mgw_senders_live',
      'mgw_webhook_backlog',
      'process_resident_memory_bytes',
    ])
      expect(names, family).to.include(family);
    // Each part's log lines carry its own service name (one logger, one output).
    const services = new Set(
      proc!.output
        .filter((l) => l.startsWith('{'))
        .map((l) => (JSON.parse(l) as { service: string }).service),
    );
    expect([...services]).to.include.members(['all-in-one', 'api', 'connection', 'sender', 'notifier']);
  });

  it('When the phone links by QR and a text is sent, then it arrives, its receipts come back, and message.sent, delivered and read reach the webhook, signed', async () => {
    const s = stack();
    const set = await s.api<{ data: { secret: string } }>('PUT', '/webhook', { url: receiver.url });
    expect(set.status, JSON.stringify(set.body)).to.equal(200);
    receiver.secrets = [set.body.data.secret];
    await s.linkByQr('15550990001', 'All-in-one Account');
    await waitFor(
      async () => receiver.events('session.status', (d) => d.status === 'connected').length === 1,
      {
        timeoutMs: 15_000,
        what: 'session.status connected',
      },
    );

    const contact = '15550990002';
    const res = await s.api<{ messageId: string }>('POST', '/send', { to: contact, text: 'one process' });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    const { messageId } = res.body;
    await waitFor(async () => (await s.inbox(contact)).some((m) => m.text === 'one process'), {
      what: 'the text at the contact',
    });
    await waitFor(
      async () => receiver.events('message.read', (d) => d.messageId === messageId).length === 1,
      {
        timeoutMs: 20_000,
        what: 'message.read at the webhook',
      },
    );
    const mine = receiver.accepted().filter((d) => d.body.data.messageId === messageId);
    expect(mine.map((d) => d.body.type)).to.deep.equal(['message.sent', 'message.delivered', 'message.read']);
    for (const d of mine) expect(d.verifiedWith, d.body.type).to.equal(receiver.secrets[0]);
    const record = await s.api<{ data: Record<string, unknown> }>('GET', `/messages/${messageId}`);
    expect(record.body.data).to.include({ messageId, status: 'read' });
  });

  it("When a part's setting is bad, then it stops before starting anything, naming the parts and the variables (once for a problem they share)", async () => {
    const env = {
      ...process.env,
      REDIS_URL: stack().redisUrl,
      WEBHOOK_TIMEOUT_MS: '5',
      SENDER_HEAP_GROWING_PERCENT: '900',
      MGW_ENCRYPTION_KEY: 'not-a-key',
    };
    const failed = await run(process.execPath, entryArgs('services/all-in-one', 'main', false), env).then(
      () => '',
      (err: Error) => err.message,
    );
    expect(failed).to.match(/all-in-one failed to start/);
    expect(failed).to.match(/MGW_ENCRYPTION_KEY is malformed[^;]*\(api, connection, sender, notifier\)/);
    expect(failed).to.match(/SENDER_HEAP_GROWING_PERCENT must be[^;]*\(sender\)/);
    expect(failed).to.match(/WEBHOOK_TIMEOUT_MS must be[^;]*\(notifier\)/);
    expect(failed).not.to.include('not-a-key');
  });

  it('When it gets SIGTERM, then every part stops (the device lease released, no liveness left) and it exits 0', async () => {
    const [proc] = stack().processes;
    proc!.child.kill('SIGTERM');
    expect(await proc!.exited).to.equal(0);
    const lines = proc!.output
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { service: string; message: string });
    const at = (service: string, message: RegExp) =>
      lines.findIndex((l) => l.service === service && message.test(l.message));
    const shutting = at('all-in-one', /^shutting down$/);
    const complete = at('all-in-one', /^shutdown complete$/);
    expect(shutting, 'shutting down').to.be.greaterThan(-1);
    expect(complete, 'shutdown complete').to.be.greaterThan(shutting);
    // The sender released the device's lease (not left to expire) and the connection service and
    // sender left their liveness sets: each part's own shutdown ran, before Redis closed.
    const s = stack();
    expect(await s.redis.exists(keys.lease(s.deviceId)), 'the device lease').to.equal(0);
    expect(await s.redis.zcard(keys.connectionWorkers()), 'live connection services').to.equal(0);
    expect(await s.redis.zcard(keys.senders()), 'live senders').to.equal(0);
  });
});
