import { expect } from 'chai';
import { SANDBOX_NUMBER, WEBHOOK_FORMS, type FormDelivery, type WebhookForm } from '@mgw/cloud-sim';
import { keys } from '@mgw/contracts';
import { useStack, waitFor } from '@mgw/testing';
import { expectedMessages, expectedRecord, messageValues, type Expected } from './form-expectations.js';

/**
 * Test what arrives, not what we expect: every form of Meta's webhook the Cloud API simulator
 * writes (its table, `WEBHOOK_FORMS`: one row each, none listed here) is delivered — twice, as
 * Meta redelivers — signed, to the real gateway (`cloud: true` stack: the API behind Meta's
 * endpoint, the sender behind the device), and what the gateway made of it is read back through
 * its API: the `message.received` / `message.reaction` events (one per wamid), an attachment's
 * exact bytes through GET /messages/:id/media (from Meta's media endpoints), the contact's
 * 24-hour window, the record a status moves (never backwards), and a 200 for every body — other
 * fields' changes included. What each form must become is form-expectations.ts (the table of
 * docs/cloud-api.md), read from Meta's JSON, not from our parser.
 */
describe('e2e: every webhook form Meta may send, through the real gateway (forms matrix)', function () {
  this.timeout(600_000);
  const stack = useStack({ cloud: true }, 120);
  const deviceId = `forms-${Math.random().toString(36).slice(2, 8)}`;
  let token = '';

  type Event = { type: string; data: Record<string, unknown> };
  const events = async (): Promise<Event[]> => {
    const res = await stack().api<{ data: { events: Event[] } }>(
      'GET',
      '/events?types=message.received,message.reaction,message.sent,message.delivered,message.read,message.failed&limit=1000',
      undefined,
      token,
    );
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data.events;
  };
  const windowOf = async (phone: string) =>
    stack()
      .redis.zscore(keys.cloudWindows(deviceId), phone)
      .then((v) => (v === null ? undefined : Number(v)));

  /** A template the device sends the user through the real sender: the message a form answers or reports on. */
  async function sentTo(user: string): Promise<{ wamid: string; messageId: string }> {
    const res = await stack().api<{ messageId: string }>(
      'POST',
      '/send',
      {
        to: user,
        template: {
          name: 'order_update',
          language: 'en_US',
          components: [{ type: 'body', parameters: [{ type: 'text', text: '#1234' }] }],
        },
      },
      token,
    );
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    const { messageId } = res.body;
    let wamid = '';
    await waitFor(
      async () => {
        wamid =
          stack()
            .cloud.sent(SANDBOX_NUMBER.id)
            .find((m) => m.callbackData === messageId)?.id ?? '';
        const record = await stack().api<{ data: { status: string } }>(
          'GET',
          `/messages/${messageId}`,
          undefined,
          token,
        );
        return wamid !== '' && record.body.data?.status === 'sent';
      },
      { timeoutMs: 20_000, what: `the template to ${user} sent` },
    );
    return { wamid, messageId };
  }

  before(async () => {
    token = await stack().createToken(deviceId);
    await stack().configureSandboxCloud(token);
    const connected = await stack().api('POST', '/connect', undefined, token);
    expect(connected.body, JSON.stringify(connected.body)).to.deep.include({ status: 'connected' });
    await stack().cloudSubscribed();
  });

  WEBHOOK_FORMS.forEach((form, i) => {
    it(`${form.name}: ${form.about}`, async () => {
      // A user of its own per row: windows and records of one row never meet another's.
      const user = `1555031${String(i).padStart(4, '0')}`;
      const target = await sentTo(user);
      const before = stack().cloud.deliveries().length;
      const delivered = stack().cloud.deliverForm(SANDBOX_NUMBER.id, form.name, {
        from: user,
        name: 'Ann Example',
        target: target.wamid,
        times: 2,
      });
      await stack().cloud.webhooksIdle();
      const attempts = stack()
        .cloud.deliveries()
        .slice(before)
        .map((d) => d.attempts);
      expect(attempts, 'each body (and its redelivery) answered 200 at once').to.deep.equal(
        delivered.bodies.flatMap(() => [[200], [200]]),
      );
      await checkMessages(form, delivered, user, target);
      await checkStatuses(delivered, target);
    });
  });

  async function checkMessages(
    form: WebhookForm,
    delivered: FormDelivery,
    user: string,
    target: { wamid: string; messageId: string },
  ) {
    const expected = expectedMessages(delivered.bodies, SANDBOX_NUMBER.id);
    expect(
      expected.map((e) => e.wamid),
      'every message of the form is judged',
    ).to.deep.equal(delivered.messageIds);
    const all = await events();
    for (const e of expected) {
      const received = all.filter(
        (x) => x.type === 'message.received' && x.data.platformMessageId === e.wamid,
      );
      const reactions = all.filter(
        (x) => x.type === 'message.reaction' && x.data.platformMessageId === e.wamid,
      );
      const what = `${form.name} ${e.kind}${e.kind === 'ignored' ? ` (${e.why})` : ''}`;
      expect(received, `${what}: message.received`).to.have.length(e.kind === 'received' ? 1 : 0);
      expect(reactions, `${what}: message.reaction`).to.have.length(e.kind === 'reaction' ? 1 : 0);
      if (e.kind === 'received') checkReceived(received[0]!.data, e, user, target);
      if (e.kind === 'received' && e.mediaId) await checkDownload(received[0]!.data, e.mediaId, delivered);
      if (e.kind === 'reaction')
        expect(reactions[0]!.data, what).to.deep.include({
          targetPlatformMessageId: e.target,
          emoji: e.emoji,
          ...(e.target === target.wamid ? { messageId: target.messageId } : {}),
        });
    }
    const opens = expected.some((e) => e.kind !== 'ignored' || e.window);
    const window = await windowOf(user);
    if (opens) expect(window, `${form.name}: the window opened`).to.be.closeTo(Date.now(), 120_000);
    else expect(window, `${form.name}: no window`).to.equal(undefined);
  }

  function checkReceived(
    data: Record<string, unknown>,
    e: Extract<Expected, { kind: 'received' }>,
    user: string,
    target: { wamid: string; messageId: string },
  ) {
    const { quotes, attachment, ...fields } = e.fields;
    expect(data.from).to.equal(user);
    expect(data.contact).to.deep.equal({ phone: user, ...(e.username ? { username: e.username } : {}) });
    const shown = {
      text: data.text,
      location: data.location,
      contacts: data.contacts,
    };
    expect(shown, e.wamid).to.deep.equal({
      text: undefined,
      location: undefined,
      contacts: undefined,
      ...fields,
    });
    if (attachment) {
      const got = data.attachment as Record<string, unknown>;
      expect({ type: got.type, mimeType: got.mimeType, fileName: got.fileName }).to.deep.equal({
        fileName: undefined,
        ...attachment,
      });
    } else expect(data.attachment).to.equal(undefined);
    if (quotes === target.wamid)
      expect(data.replyTo, 'replyTo: our id of the quoted message').to.equal(target.messageId);
    else expect(data.replyTo).to.equal(undefined);
  }

  /** The client downloads the attachment (GET /messages/:id/media): the exact bytes the contact sent. */
  async function checkDownload(data: Record<string, unknown>, mediaId: string, delivered: FormDelivery) {
    const sent = delivered.files.find((f) => f.id === mediaId)!;
    const res = await fetch(`${stack().apiUrl}/api/messenger/v1/messages/${String(data.messageId)}/media`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status, await res.clone().text()).to.equal(200);
    expect(res.headers.get('content-type')).to.equal(sent.mimeType);
    expect(Buffer.from(await res.arrayBuffer()).equals(sent.bytes), 'the exact bytes').to.equal(true);
  }

  async function checkStatuses(delivered: FormDelivery, target: { wamid: string; messageId: string }) {
    const hasStatuses = messageValues(delivered.bodies, SANDBOX_NUMBER.id).some((v) =>
      Array.isArray(v.statuses),
    );
    const want = expectedRecord(delivered.bodies, SANDBOX_NUMBER.id, target);
    const record = await stack().api<{ data: Record<string, unknown> }>(
      'GET',
      `/messages/${target.messageId}`,
      undefined,
      token,
    );
    expect(
      record.body.data,
      hasStatuses ? 'the record as its statuses leave it' : 'untouched',
    ).to.deep.include(want);
    const order = ['message.sent', 'message.delivered', 'message.read', 'message.failed'];
    const mine = (await events())
      .filter((x) => order.includes(x.type) && x.data.messageId === target.messageId)
      .map((x) => x.type);
    // Each status event at most once, in the order a record moves (never backwards).
    expect(new Set(mine).size, mine.join()).to.equal(mine.length);
    expect(mine).to.deep.equal([...mine].sort((a, b) => order.indexOf(a) - order.indexOf(b)));
    expect(mine.at(-1)).to.equal(`message.${want.status}`);
  }
});
