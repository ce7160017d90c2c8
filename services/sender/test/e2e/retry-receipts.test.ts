import { expect } from 'chai';
import { keys, type MessageRecord } from '@mgw/contracts';
import { PHONE_RETRY_MAX } from '@mgw/messenger-sim';
import { WebhookReceiver, useStack, waitFor } from '@mgw/testing';

/**
 * Retry receipts end to end: the simulator's contact phones fail to decrypt (a fault per contact:
 * once, always, re-installed) and ask again with `receipt type="retry"`; the real Baileys client
 * in the sender answers through the gateway's bound (MESSAGE_RETRY_MAX, default 5), and the
 * record, the event log and the metrics show it.
 */
describe('e2e: retry receipts — a phone that cannot decrypt asks again (real services with the notifier, simulator)', function () {
  this.timeout(150_000);
  const stack = useStack({
    notifier: true,
    env: {
      SEND_MIN_GAP_MS: '0',
      SEND_GAP_JITTER_MS: '0',
      ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
      WEBHOOK_SWEEP_MS: '500',
    },
  });
  const account = '15550810001';
  let receiver: WebhookReceiver;

  before(async () => {
    receiver = await WebhookReceiver.start();
    await stack().linkByQr(account);
    await stack().waitForStatus('connected');
    const hook = await stack().api<{ data: { secret: string } }>('PUT', '/webhook', { url: receiver.url });
    expect(hook.status).to.equal(200);
    receiver.secrets = [hook.body.data.secret];
  });
  after(async () => {
    await receiver?.close();
  });
  afterEach(async () => {
    await stack().simApi('DELETE', '/faults');
  });

  async function send(to: string, text: string): Promise<string> {
    const res = await stack().api<{ messageId: string }>('POST', '/send', { to, text });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    return res.body.messageId;
  }
  async function record(id: string): Promise<MessageRecord> {
    return (await stack().api<{ data: MessageRecord }>('GET', `/messages/${id}`)).body.data;
  }
  /** The device's event log entries of one type (every event, webhook or not). */
  async function logged(type: string): Promise<Record<string, unknown>[]> {
    const entries = (await stack().redis.xrange(keys.eventLog(stack().deviceId), '-', '+')) as [
      string,
      string[],
    ][];
    return entries
      .filter(([, f]) => f[f.indexOf('type') + 1] === type)
      .map(([, f]) => JSON.parse(f[f.indexOf('data') + 1]!) as Record<string, unknown>);
  }
  async function metric(name: string): Promise<number> {
    let total = 0;
    for (const p of stack()
      .senders()
      .filter((s) => s.child.exitCode === null && s.child.signalCode === null)) {
      const text = await (await fetch(`http://127.0.0.1:${p.metricsPort}/metrics`)).text();
      for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)`, 'gm')))
        total += Number(m[1]);
    }
    return total;
  }
  async function undecryptableCopies(phone: string, id: string): Promise<number> {
    const { messages } = await stack().simApi<{ messages: { id: string }[] }>(
      'GET',
      `/undecryptable/${phone}`,
    );
    return messages.filter((m) => m.id === id).length;
  }
  const inboxCopies = async (phone: string, text: string) =>
    (await stack().inbox(phone)).filter((m) => m.text === text);

  it('When the phone fails the first copy once, then the retry is answered, the message is delivered once, and the record shows 1 asked / 1 answered with no undecryptable event', async () => {
    const contact = '15550810002';
    await stack().simApi('POST', '/faults/undecryptable', { phone: contact, mode: 'once' });
    const text = `retry once ${Date.now()}`;
    const id = await send(contact, text);
    await waitFor(async () => ['delivered', 'read'].includes((await record(id)).status), {
      timeoutMs: 30_000,
      what: 'delivered after the retry',
    });
    const r = await record(id);
    expect(r.retries).to.include({ asked: 1, answered: 1 });
    expect(r.retries!.lastAt).to.be.a('string');
    expect(r.retries!.undecryptableAt).to.equal(undefined);
    expect(await undecryptableCopies(contact, r.platformMessageId)).to.equal(1);
    expect(await inboxCopies(contact, text)).to.have.length(1);
    expect((await logged('message.undecryptable')).filter((d) => d.messageId === id)).to.have.length(0);
    await waitFor(async () => receiver.events('message.delivered', (d) => d.messageId === id).length > 0, {
      what: 'message.delivered at the webhook',
    });
    expect(receiver.events('message.undecryptable', (d) => d.messageId === id)).to.have.length(0);
    expect(await metric('mgw_message_retries_total')).to.be.at.least(1);
  });

  it('When every copy fails, then the gateway answers up to MESSAGE_RETRY_MAX, the record stays sent and is marked undecryptable once, with the event and the metric', async () => {
    const contact = '15550810003';
    const before = await metric('mgw_messages_undecryptable_total');
    await stack().simApi('POST', '/faults/undecryptable', { phone: contact, mode: 'always' });
    const text = `retry always ${Date.now()}`;
    const id = await send(contact, text);
    await waitFor(async () => (await record(id)).retries?.undecryptableAt !== undefined, {
      timeoutMs: 40_000,
      what: 'the message marked undecryptable',
    });
    const r0 = await record(id);
    // The phone gives up after its own PHONE_RETRY_MAX asks (5, as Baileys' phones); every copy
    // it got failed: the first and one per answer.
    await waitFor(
      async () => (await undecryptableCopies(contact, r0.platformMessageId)) === PHONE_RETRY_MAX + 1,
      {
        timeoutMs: 30_000,
        what: 'the last re-sent copy failed too',
      },
    );
    const r = await record(id);
    expect(r.status).to.equal('sent');
    expect(r.retries).to.include({ asked: 5, answered: 5 });
    const events = (await logged('message.undecryptable')).filter((d) => d.messageId === id);
    expect(events).to.have.length(1);
    expect(events[0]).to.deep.include({
      deviceId: stack().deviceId,
      messageId: id,
      to: contact,
      platformMessageId: r.platformMessageId,
      status: 'sent',
      undecryptableAt: r.retries!.undecryptableAt,
    });
    expect(events[0]!.retries).to.deep.equal({ asked: 5, answered: 4 });
    // the device's webhook got it too, signed, with the same data
    await waitFor(
      async () => receiver.events('message.undecryptable', (d) => d.messageId === id).length > 0,
      {
        what: 'message.undecryptable delivered to the webhook',
      },
    );
    const hooked = receiver.events('message.undecryptable', (d) => d.messageId === id);
    expect(hooked).to.have.length(1);
    expect(hooked[0]!.verifiedWith, 'signed').to.be.a('string');
    expect(hooked[0]!.id).to.equal(`${id}.undecryptable`);
    expect(hooked[0]!.body.data).to.deep.equal(events[0]);
    expect(await metric('mgw_messages_undecryptable_total')).to.equal(before + 1);
    expect(await inboxCopies(contact, text)).to.have.length(0);
  });

  it('When the phone was re-installed (new identity), then its retry receipt carries the new keys, the client starts a new session and the message is delivered', async () => {
    const contact = '15550810004';
    // a first message builds the client's session with the old identity
    const first = await send(contact, 'before the re-install');
    await waitFor(async () => ['delivered', 'read'].includes((await record(first)).status), {
      what: 'first message delivered',
    });
    await stack().simApi('POST', '/faults/undecryptable', { phone: contact, mode: 'reinstalled' });
    // A key fetch would never be answered: the client must build the session from the keys the
    // retry receipt carries (Baileys' injectE2ESession), not fetch a bundle from the server.
    await stack().simApi('POST', '/faults/stall', { phone: account, xmlns: 'encrypt', tag: 'key', count: 1 });
    const text = `after the re-install ${Date.now()}`;
    const id = await send(contact, text);
    await waitFor(async () => ['delivered', 'read'].includes((await record(id)).status), {
      timeoutMs: 30_000,
      what: 'delivered to the re-installed phone',
    });
    const r = await record(id);
    expect(r.retries).to.include({ asked: 1, answered: 1 });
    expect(await undecryptableCopies(contact, r.platformMessageId)).to.equal(1);
    expect(await inboxCopies(contact, text)).to.have.length(1);
    // and the new session holds: the next message needs no retry
    const next = await send(contact, 'next');
    await waitFor(async () => ['delivered', 'read'].includes((await record(next)).status), {
      what: 'next message delivered',
    });
    expect((await record(next)).retries).to.equal(undefined);
  });

  it('When the sender is killed between the send and the retry receipt, then the new sender answers it from Redis and the message is delivered', async () => {
    const contact = '15550810005';
    // the retry receipt comes 4 s after the failed copy: by then the sender that sent it is dead
    await stack().simApi('POST', '/faults/undecryptable', { phone: contact, mode: 'once', delayMs: 4000 });
    const text = `retry across a restart ${Date.now()}`;
    const id = await send(contact, text);
    await waitFor(async () => (await record(id)).status === 'sent', { intervalMs: 20, what: 'sent' });
    const [old] = stack().senders();
    old!.child.kill('SIGKILL');
    await old!.exited;
    const killedAt = Date.now();
    await stack().startService('sender');
    await waitFor(async () => ['delivered', 'read'].includes((await record(id)).status), {
      timeoutMs: 60_000,
      what: 'delivered after the restart',
    });
    const r = await record(id);
    expect(r.retries).to.include({ asked: 1, answered: 1 });
    // asked after the kill: the new process counted and answered it
    expect(Date.parse(r.retries!.lastAt!)).to.be.greaterThan(killedAt);
    expect(await inboxCopies(contact, text)).to.have.length(1);
  });
});

describe('e2e: retry receipts past a lower MESSAGE_RETRY_MAX are refused (real services, simulator)', function () {
  this.timeout(120_000);
  const stack = useStack({ env: { SEND_MIN_GAP_MS: '0', SEND_GAP_JITTER_MS: '0', MESSAGE_RETRY_MAX: '2' } });
  const account = '15550820001';

  before(async () => {
    await stack().linkByQr(account);
    await stack().waitForStatus('connected');
  });

  it('When every copy fails and the bound is 2, then two asks are answered, the second marks it undecryptable, and the third is not answered (no copy goes)', async () => {
    const contact = '15550820002';
    await stack().simApi('POST', '/faults/undecryptable', { phone: contact, mode: 'always' });
    const res = await stack().api<{ messageId: string }>('POST', '/send', { to: contact, text: 'bounded' });
    const id = res.body.messageId;
    const record = async () =>
      (await stack().api<{ data: MessageRecord }>('GET', `/messages/${id}`)).body.data;
    await waitFor(async () => (await record()).retries?.asked === 3, {
      timeoutMs: 30_000,
      what: 'the third ask counted',
    });
    const r0 = await record();
    const copies = async () =>
      (
        await stack().simApi<{ messages: { id: string }[] }>('GET', `/undecryptable/${contact}`)
      ).messages.filter((m) => m.id === r0.platformMessageId).length;
    // the first copy and the two re-sends failed; the third ask got nothing, so the phone waits
    await waitFor(async () => (await copies()) === 3, { what: 'three failed copies' });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await copies()).to.equal(3);
    const r = await record();
    expect(r.status).to.equal('sent');
    expect(r.retries).to.include({ asked: 3, answered: 2 });
    expect(r.retries!.undecryptableAt).to.be.a('string');
    const metrics = await (
      await fetch(`http://127.0.0.1:${stack().senders()[0]!.metricsPort}/metrics`)
    ).text();
    expect(metrics).to.match(/^mgw_message_retries_total\{outcome="refused"\} 1$/m);
    expect(metrics).to.match(/^mgw_message_retries_total\{outcome="resent"\} 2$/m);
    expect(metrics).to.match(
      new RegExp(`^mgw_messages_undecryptable_total\\{device="${stack().deviceId}"\\} 1$`, 'm'),
    );
  });
});
