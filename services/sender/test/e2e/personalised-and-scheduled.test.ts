import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { useStack, waitFor } from '@mgw/testing';

interface ListAnswer {
  success: boolean;
  messageId: string;
  messageIds: string[];
}

interface Batch {
  total: number;
  counts: Record<string, number>;
  sendAt?: string;
}

describe('e2e: personalised lists and scheduled sends (real services, simulator)', function () {
  this.timeout(240_000);
  const stack = useStack({ sim: { receiptDelayMs: 200, readDelayMs: null } });
  const account = '15550970001';
  const contact = (i: number) => `1555097${String(1000 + i).padStart(4, '0')}`;

  before(async () => {
    await stack().linkByQr(account);
  });

  async function record(id: string): Promise<Record<string, string>> {
    return (await stack().api<{ data: Record<string, string> }>('GET', `/messages/${id}`)).body.data;
  }
  async function batch(id: string): Promise<Batch> {
    return (await stack().api<{ data: Batch }>('GET', `/batches/${id}`)).body.data;
  }
  const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

  it('When a list of 20 carries each recipient its own variables, then each inbox holds its own text (a spaced `{{ x }}` stays as written)', async () => {
    const people = Array.from({ length: 20 }, (_, i) => ({
      phone: contact(i),
      vars: { name: `Name${i}`, order_no: `A-${1000 + i}`, unused: 'never stored' },
    }));
    const res = await stack().api<ListAnswer>('POST', '/send', {
      to: people,
      text: 'Hi {{name}}, order {{order_no}} is ready. {{ name }} {{name',
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    expect(res.body.messageIds).to.have.length(20);
    await waitFor(async () => (await batch(res.body.messageId)).counts.queued === 0, {
      timeoutMs: 120_000,
      intervalMs: 500,
      what: 'the list sent',
    });
    for (let i = 0; i < 20; i++) {
      const inbox = await stack().inbox(contact(i));
      expect(inbox, contact(i)).to.have.length(1);
      expect(inbox[0]!.text).to.equal(`Hi Name${i}, order A-${1000 + i} is ready. {{ name }} {{name`);
    }
    const b = await batch(res.body.messageId);
    expect(b.counts.failed).to.equal(0);
    expect(sum(b.counts)).to.equal(20);
  });

  it('When an image goes to a personalised list with a caption and a text, then each contact gets its own caption and its own follow-up text', async () => {
    const bytes = randomBytes(8000);
    const res = await stack().api<ListAnswer>('POST', '/send', {
      to: [
        { phone: contact(30), vars: { name: 'Ana' } },
        { phone: contact(31), vars: { name: 'Bruno' } },
      ],
      text: 'Thanks, {{name}}!',
      attachment: { type: 'image', base64: bytes.toString('base64'), caption: 'Invoice for {{name}}' },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    for (const [phone, name] of [
      [contact(30), 'Ana'],
      [contact(31), 'Bruno'],
    ] as const) {
      await waitFor(async () => (await stack().inbox(phone)).length === 2, { what: `${name}'s messages` });
      const inbox = await stack().inbox(phone);
      expect(inbox.find((m) => m.type === 'image')?.caption).to.equal(`Invoice for ${name}`);
      expect(inbox.find((m) => m.type === 'text')?.text).to.equal(`Thanks, ${name}!`);
    }
  });

  it('When recipients lack a variable the text uses, then 400 Invalid request data names each of them (path to, i, vars, name) and nothing is sent', async () => {
    const to = [
      { phone: contact(40), vars: { name: 'Ana', city: 'Lisbon' } },
      { phone: contact(41), vars: { name: 'Bo' } },
      contact(42),
      { phone: contact(43) },
      { phone: contact(44), vars: { name: 'Cy', city: 'Porto' } },
    ];
    const res = await stack().api('POST', '/send', { to, text: 'Hi {{name}} from {{city}}' });
    expect(res.status).to.equal(400);
    expect(res.body).to.deep.equal({
      success: false,
      error: 'Invalid request data',
      details: [
        { path: ['to', 1, 'vars', 'city'], message: 'to[1].vars must include city' },
        { path: ['to', 2, 'vars', 'name'], message: 'to[2].vars must include name' },
        { path: ['to', 3, 'vars', 'name'], message: 'to[3].vars must include name' },
      ],
    });
    // A bad variable name or an oversized value is refused by the schema.
    const badName = await stack().api<{ details: { path: unknown[] }[] }>('POST', '/send', {
      to: [{ phone: contact(40), vars: { 'first-name': 'x' } }],
      text: 'hi',
    });
    expect(badName.status).to.equal(400);
    expect(badName.body.details[0]!.path).to.deep.equal(['to', 0, 'vars', 'first-name']);
    const tooLong = await stack().api<{ details: { path: unknown[] }[] }>('POST', '/send', {
      to: [{ phone: contact(40), vars: { name: 'x'.repeat(257) } }],
      text: 'hi {{name}}',
    });
    expect(tooLong.status).to.equal(400);
    expect(tooLong.body.details[0]!.path).to.deep.equal(['to', 0, 'vars', 'name']);
    await new Promise((r) => setTimeout(r, 1500));
    for (const i of [40, 41, 42, 43, 44]) expect(await stack().inbox(contact(i))).to.deep.equal([]);
  });

  it('When plain numbers and objects are mixed, or one object is the whole `to`, then each is sent; a list of plain numbers keeps `{{name}}` as written', async () => {
    const mixed = await stack().api<ListAnswer>('POST', '/send', {
      to: [contact(50), { phone: contact(51), vars: { name: 'Dee' } }, { phone: contact(52) }],
      text: 'Same text for everyone',
    });
    expect(mixed.status, JSON.stringify(mixed.body)).to.equal(202);
    expect(mixed.body.messageIds).to.have.length(3);
    const single = await stack().api<{ messageId: string; messageIds?: string[] }>('POST', '/send', {
      to: { phone: contact(53), vars: { name: 'Eve' } },
      text: 'Hello {{name}}',
    });
    expect(single.status, JSON.stringify(single.body)).to.equal(202);
    expect(single.body.messageIds).to.equal(undefined);
    const plain = await stack().api('POST', '/send', { to: [contact(54)], text: 'Hello {{name}}' });
    expect(plain.status).to.equal(202);
    const expected: [number, string][] = [
      [50, 'Same text for everyone'],
      [51, 'Same text for everyone'],
      [52, 'Same text for everyone'],
      [53, 'Hello Eve'],
      [54, 'Hello {{name}}'],
    ];
    for (const [i, text] of expected) {
      await waitFor(async () => (await stack().inbox(contact(i))).length === 1, { what: `contact ${i}` });
      expect((await stack().inbox(contact(i)))[0]!.text).to.equal(text);
    }
  });

  it('When a list is sent with sendAt 10 s ahead, then nothing arrives before it, its records read scheduled (with sendAt) and its batch counts scheduled; after it, every message is sent', async () => {
    const phones = [contact(60), contact(61), contact(62)];
    const sendAt = new Date(Date.now() + 10_000);
    // An explicit offset: +02:00, the same instant.
    const local = new Date(sendAt.getTime() + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    const res = await stack().api<ListAnswer>('POST', '/send', {
      to: [
        { phone: phones[0], vars: { name: 'Fay' } },
        { phone: phones[1], vars: { name: 'Gus' } },
        {
          phone: phones[2],
          vars: { name: 'Hal' },
        },
      ],
      text: 'Good morning {{name}}',
      sendAt: local,
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    const due = sendAt.toISOString();
    for (const id of res.body.messageIds)
      expect(await record(id)).to.include({ status: 'scheduled', sendAt: due });
    const early = await batch(res.body.messageId);
    expect(early.counts).to.include({ scheduled: 3, queued: 0 });
    expect(early.sendAt).to.equal(due);
    const listed = await stack().api<{ data: { messages: { messageId: string; sendAt: string }[] } }>(
      'GET',
      `/messages?batchId=${res.body.messageId}&status=scheduled`,
    );
    expect(listed.body.data.messages.map((m) => m.messageId).sort()).to.deep.equal(
      [...res.body.messageIds].sort(),
    );
    expect(listed.body.data.messages.every((m) => m.sendAt === due)).to.equal(true);

    // Until a moment before it is due, nothing arrives.
    while (Date.now() < sendAt.getTime() - 500) {
      for (const p of phones) expect(await stack().inbox(p), 'arrived before sendAt').to.deep.equal([]);
      await new Promise((r) => setTimeout(r, 500));
    }
    const sentOrDelivered = async () => {
      const { counts } = await batch(res.body.messageId);
      return (counts.sent ?? 0) + (counts.delivered ?? 0);
    };
    await waitFor(async () => (await sentOrDelivered()) === 3, {
      timeoutMs: 30_000,
      what: 'the scheduled list sent',
    });
    for (const [i, p] of phones.entries()) {
      const inbox = await stack().inbox(p);
      expect(inbox).to.have.length(1);
      expect(inbox[0]!.text).to.equal(`Good morning ${['Fay', 'Gus', 'Hal'][i]}`);
      expect(Date.parse(inbox[0]!.receivedAt)).to.be.at.least(sendAt.getTime());
      const r = await record(res.body.messageIds[i]!);
      expect(r.status).to.be.oneOf(['sent', 'delivered']);
      expect(r.sendAt).to.equal(due);
      expect(Date.parse(r.sentAt!)).to.be.at.least(sendAt.getTime());
    }
    const after = await batch(res.body.messageId);
    expect(after.counts.scheduled).to.equal(0);
    expect(sum(after.counts)).to.equal(3);
  });

  it('When sendAt is in the past, then the message is sent now; beyond 30 days, without an offset or not a date, then 400; OTP takes no sendAt', async () => {
    const past = await stack().api<{ messageId: string }>('POST', '/send', {
      to: contact(70),
      text: 'late but sent',
      sendAt: '2020-01-01T00:00:00Z',
    });
    expect(past.status).to.equal(202);
    await waitFor(async () => (await stack().inbox(contact(70))).length === 1, { what: 'sent now' });
    expect((await record(past.body.messageId)).sendAt).to.equal(undefined);

    const far = new Date(Date.now() + 31 * 24 * 3600_000).toISOString();
    for (const [sendAt, message] of [
      [far, 'sendAt may be at most 30 days ahead'],
      [
        '2030-01-01T09:00:00',
        'sendAt must be an ISO 8601 date and time with an offset, e.g. 2030-01-31T09:00:00+01:00',
      ],
      [
        '2030-02-30T09:00:00Z',
        'sendAt must be an ISO 8601 date and time with an offset, e.g. 2030-01-31T09:00:00+01:00',
      ],
      ['tomorrow', 'sendAt must be an ISO 8601 date and time with an offset, e.g. 2030-01-31T09:00:00+01:00'],
    ] as const) {
      const res = await stack().api('POST', '/send', { to: contact(71), text: 'x', sendAt });
      expect(res.status, sendAt).to.equal(400);
      expect(res.body, sendAt).to.deep.equal({
        success: false,
        error: 'Invalid request data',
        details: [{ path: ['sendAt'], message }],
      });
    }
    const otp = await stack().api('POST', '/otp', {
      phone: contact(71),
      code: '1234',
      sendAt: new Date(Date.now() + 60_000).toISOString(),
    });
    expect(otp.status).to.equal(400);
    expect(await stack().inbox(contact(71))).to.deep.equal([]);
  });

  it('When the device is logged out while a list is scheduled, then its messages end failed (logged_out) and the counts move from scheduled', async () => {
    const res = await stack().api<ListAnswer>('POST', '/send', {
      to: [contact(80), contact(81)],
      text: 'never',
      sendAt: new Date(Date.now() + 3600_000).toISOString(),
    });
    expect(res.status).to.equal(202);
    expect((await batch(res.body.messageId)).counts.scheduled).to.equal(2);
    const out = await stack().api('POST', '/disconnect');
    expect(out.status, JSON.stringify(out.body)).to.equal(200);
    await waitFor(async () => (await batch(res.body.messageId)).counts.failed === 2, { what: 'failed' });
    for (const id of res.body.messageIds)
      expect(await record(id)).to.include({ status: 'failed', error: 'logged_out' });
    const b = await batch(res.body.messageId);
    expect(b.counts.scheduled).to.equal(0);
    expect(sum(b.counts)).to.equal(2);
  });
});
