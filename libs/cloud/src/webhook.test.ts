import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { HOSTILE_LIST_ENTRIES } from '@mgw/testing';
import { parseWebhook, verifySignature, WEBHOOK_LIMITS, type MessageEvent } from './webhook.js';

const sign = (body: Buffer | string, secret: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** A delivery of one change of the number 1001, as Meta wraps it. */
const delivery = (value: Record<string, unknown>, phoneNumberId: unknown = '1001') => ({
  object: 'whatsapp_business_account',
  entry: [
    {
      id: '2001',
      changes: [
        {
          field: 'messages',
          value: {
            messaging_product: 'whatsapp',
            metadata: { display_phone_number: '15550100001', phone_number_id: phoneNumberId },
            ...value,
          },
        },
      ],
    },
  ],
});
const message = (m: Record<string, unknown>) =>
  delivery({
    contacts: [{ profile: { name: 'Ann' }, wa_id: '15550102000' }],
    messages: [{ from: '15550102000', id: 'wamid.in1', timestamp: '1700000000', ...m }],
  });
const only = (body: unknown) => {
  const { events } = parseWebhook(body);
  expect(events).to.have.length(1);
  return events[0]!;
};

describe('cloud: webhook signature', () => {
  const body = Buffer.from('{"object":"whatsapp_business_account"}');

  it('When the header is the app secret HMAC of the raw bytes, then it verifies (either hex case)', () => {
    expect(verifySignature(body, sign(body, 's1'), 's1')).to.equal(true);
    expect(verifySignature(body, sign(body, 's1').toUpperCase().replace('SHA256', 'sha256'), 's1')).to.equal(
      true,
    );
  });

  it('When the secret, the bytes or the header differ in any way, then it does not verify', () => {
    const good = sign(body, 's1');
    expect(verifySignature(body, sign(body, 's2'), 's1'), 'another app').to.equal(false);
    expect(verifySignature(Buffer.from(`${body.toString()} `), good, 's1'), 'bytes changed').to.equal(false);
    for (const header of [
      undefined,
      '',
      'sha256=',
      good.slice(0, -2),
      `${good}00`,
      good.replace('sha256=', 'sha1='),
      good.replace('sha256=', ''),
      `${good.slice(0, -1)}g`,
      `sha256=${'0'.repeat(64)}`,
      'x'.repeat(100_000),
    ])
      expect(verifySignature(body, header, 's1'), String(header).slice(0, 20)).to.equal(false);
    expect(verifySignature(body, sign(body, ''), ''), 'no secret').to.equal(false);
  });
});

describe('cloud: webhook payloads', () => {
  it('When a status names its callback data and errors, then it is a status event with each', () => {
    const event = only(
      delivery({
        statuses: [
          {
            id: 'wamid.s1',
            status: 'failed',
            timestamp: '1700000001',
            recipient_id: '15550102000',
            biz_opaque_callback_data: 'msg-1',
            errors: [{ code: 131026, title: 'Message undeliverable', error_data: { details: 'why' } }],
          },
        ],
      }),
    );
    expect(event).to.deep.equal({
      kind: 'status',
      phoneNumberId: '1001',
      wamid: 'wamid.s1',
      status: 'failed',
      timestampMs: 1_700_000_001_000,
      recipientId: '15550102000',
      callbackData: 'msg-1',
      errors: [{ code: 131026, title: 'Message undeliverable', details: 'why' }],
    });
  });

  it('When a voice message of the number is played, then the status is read (the contract has no played)', () => {
    const played = only(
      delivery({
        statuses: [
          { id: 'wamid.v1', status: 'played', timestamp: '1700000002', recipient_id: '15550102000' },
        ],
      }),
    );
    expect(played).to.deep.include({ kind: 'status', wamid: 'wamid.v1', status: 'read' });
    const other = parseWebhook(
      delivery({ statuses: [{ id: 'wamid.v1', status: 'deleted', timestamp: '1', recipient_id: '1' }] }),
    );
    expect(other).to.deep.include({ events: [], skipped: 1 });
  });

  it('When a text arrives, then it names the writer, their profile name, the text and what it answers', () => {
    expect(
      only(message({ type: 'text', text: { body: 'hi 👋' }, context: { from: '1555', id: 'wamid.out' } })),
    ).to.deep.equal({
      kind: 'message',
      phoneNumberId: '1001',
      wamid: 'wamid.in1',
      from: '15550102000',
      timestampMs: 1_700_000_000_000,
      type: 'text',
      text: 'hi 👋',
      contextWamid: 'wamid.out',
      profileName: 'Ann',
    });
  });

  it('When media, a location, contact cards or a reaction arrive, then each carries what its type does', () => {
    const image = only(
      message({
        type: 'image',
        image: { id: 'm1', mime_type: 'image/jpeg', sha256: 'abc', caption: 'look' },
      }),
    ) as MessageEvent;
    expect(image.media).to.deep.equal({
      type: 'image',
      id: 'm1',
      mimeType: 'image/jpeg',
      sha256: 'abc',
      caption: 'look',
    });
    const doc = only(
      message({ type: 'document', document: { id: 'm2', filename: 'a.pdf' } }),
    ) as MessageEvent;
    expect(doc.media).to.deep.equal({ type: 'document', id: 'm2', filename: 'a.pdf' });
    const place = only(
      message({ type: 'location', location: { latitude: 52.5, longitude: 13.4, name: 'Here' } }),
    ) as MessageEvent;
    expect(place.location).to.deep.equal({ latitude: 52.5, longitude: 13.4, name: 'Here' });
    const cards = only(
      message({
        type: 'contacts',
        contacts: [
          { name: { formatted_name: 'Bo' }, phones: [{ phone: '+1 555', wa_id: '1555', type: 'CELL' }, 7] },
          { name: {} },
        ],
      }),
    ) as MessageEvent;
    expect(cards.contacts).to.deep.equal([
      { name: 'Bo', phones: [{ phone: '+1 555', waId: '1555', type: 'CELL' }] },
    ]);
    const reaction = only(message({ type: 'reaction', reaction: { message_id: 'wamid.out', emoji: '' } }));
    expect((reaction as MessageEvent).reaction).to.deep.equal({ wamid: 'wamid.out', emoji: '' });
  });

  it('When contact cards carry emails, a company, no formatted name or no number, then each card keeps what it has', () => {
    const cards = (
      only(
        message({
          type: 'contacts',
          contacts: [
            {
              name: { formatted_name: 'Barbara J. Johnson' },
              phones: [{ phone: '+1 (940) 555-1234' }],
              emails: [{ email: 'b@example.com', type: 'WORK' }, { email: 'other@example.com' }],
              org: { company: 'Lucky Shrub', title: 'Counsel' },
            },
            { name: { first_name: 'Front', last_name: 'Desk' } },
            { name: {}, phones: [{ phone: '+1 555', wa_id: '1555' }] },
            { name: {}, emails: [{ email: 'nobody@example.com' }] },
          ],
        }),
      ) as MessageEvent
    ).contacts;
    expect(cards).to.deep.equal([
      {
        name: 'Barbara J. Johnson',
        phones: [{ phone: '+1 (940) 555-1234' }],
        email: 'b@example.com',
        organization: 'Lucky Shrub',
      },
      { name: 'Front Desk', phones: [] },
      { name: '', phones: [{ phone: '+1 555', waId: '1555' }] },
    ]);
  });

  it('When the contact has a username, then the message names it lower case without @; a username against the rules is left out', () => {
    const withProfile = (profile: Record<string, unknown>) =>
      only(
        delivery({
          contacts: [{ profile, wa_id: '15550102000', user_id: 'US.1' }],
          messages: [
            {
              from: '15550102000',
              id: 'wamid.u1',
              timestamp: '1700000000',
              type: 'text',
              text: { body: 'hi' },
            },
          ],
        }),
      ) as MessageEvent;
    expect(withProfile({ name: 'Ann', username: '@Ann.Shopper' })).to.deep.include({
      profileName: 'Ann',
      username: 'ann.shopper',
    });
    expect(withProfile({ username: 'www.example' })).not.to.have.property('username');
    expect(withProfile({ username: 'a<b>' })).not.to.have.property('username');
    expect(withProfile({ name: 'Ann' })).not.to.have.property('username');
  });

  it('When Meta does not share the contact’s phone, then the message names them by business-scoped user ID and username', () => {
    const parsed = parseWebhook(
      delivery({
        contacts: [{ profile: { name: 'Ann', username: 'ann.shopper' }, user_id: 'US.13491208655302741918' }],
        messages: [
          {
            from_user_id: 'US.13491208655302741918',
            id: 'wamid.h1',
            timestamp: '1700000000',
            type: 'text',
            text: { body: 'hi' },
          },
          {
            from_user_id: 'not a bsuid',
            id: 'wamid.h2',
            timestamp: '1700000000',
            type: 'text',
            text: { body: 'x' },
          },
        ],
      }),
    );
    expect(parsed.events).to.have.length(1);
    expect(parsed.skipped).to.equal(1);
    expect(parsed.events[0]).to.deep.include({
      userId: 'US.13491208655302741918',
      username: 'ann.shopper',
      profileName: 'Ann',
    });
    expect(parsed.events[0]).not.to.have.property('from');
    const both = only(
      message({ type: 'text', text: { body: 'hi' }, from_user_id: 'US.ENT.11815799212886844830' }),
    );
    expect(both).to.deep.include({ from: '15550102000', userId: 'US.ENT.11815799212886844830' });
  });

  it('When a message was written in a group, then it names the group; a group id of no readable shape drops it', () => {
    const text = { type: 'text', text: { body: 'hello group' } };
    expect(only(message({ ...text, group_id: 'Y2FwaV9ncm91cDox' }))).to.deep.include({
      groupId: 'Y2FwaV9ncm91cDox',
      from: '15550102000',
    });
    expect(parseWebhook(message({ ...text, group_id: 42 })).events).to.deep.equal([]);
    expect(only(message(text))).not.to.have.property('groupId');
  });

  it('When a reaction is removed, with an empty emoji or none, then it is a removal; a malformed emoji is no reaction', () => {
    const reactionOf = (reaction: Record<string, unknown>) =>
      (only(message({ type: 'reaction', reaction })) as MessageEvent).reaction;
    expect(reactionOf({ message_id: 'wamid.out' })).to.deep.equal({ wamid: 'wamid.out', emoji: '' });
    expect(reactionOf({ message_id: 'wamid.out', emoji: '' })).to.deep.equal({
      wamid: 'wamid.out',
      emoji: '',
    });
    expect(reactionOf({ message_id: 'wamid.out', emoji: '\uD83D' })).to.equal(undefined);
    expect(reactionOf({ message_id: 'wamid.out', emoji: 7 })).to.equal(undefined);
  });

  it('When a type is unknown, or a reply is of no shape the parser reads, then the message is kept with its type alone', () => {
    for (const m of [
      { type: 'order', order: { catalog_id: '1', product_items: [] } },
      { type: 'interactive', interactive: { type: 'button_reply', x: 1 } },
      { type: 'interactive', interactive: { type: 'call_permission_reply', call_permission_reply: {} } },
      { type: 'button', button: { payload: 'P' } },
    ]) {
      const event = only(message(m));
      expect(Object.keys(event).sort(), m.type).to.deep.equal(
        ['kind', 'phoneNumberId', 'wamid', 'from', 'timestampMs', 'type', 'profileName'].sort(),
      );
      expect((event as MessageEvent).type).to.equal(m.type);
    }
  });

  it('When the contact taps a button, a list row or a quick reply, or ends a flow, then the reply is its text', () => {
    const replyOf = (m: Record<string, unknown>) => {
      const event = only(
        message({ context: { from: '15550100001', id: 'wamid.out' }, ...m }),
      ) as MessageEvent;
      return { text: event.text, reply: event.reply, contextWamid: event.contextWamid };
    };
    expect(
      replyOf({
        type: 'interactive',
        interactive: { type: 'button_reply', button_reply: { id: 'b1', title: 'Change' } },
      }),
    ).to.deep.equal({ text: 'Change', reply: 'button_reply', contextWamid: 'wamid.out' });
    expect(
      replyOf({
        type: 'interactive',
        interactive: {
          type: 'list_reply',
          list_reply: { id: 'r1', title: 'Express', description: '1–2 days' },
        },
      }),
    ).to.deep.include({ text: 'Express', reply: 'list_reply' });
    expect(
      replyOf({ type: 'button', button: { payload: 'STOP_PROMOS', text: 'Stop promotions' } }),
    ).to.deep.include({
      text: 'Stop promotions',
      reply: 'button',
    });
    const answers = JSON.stringify({ flow_token: 't', seats: '2' });
    expect(
      replyOf({
        type: 'interactive',
        interactive: { type: 'nfm_reply', nfm_reply: { name: 'flow', body: 'Sent', response_json: answers } },
      }),
    ).to.deep.include({ text: answers, reply: 'nfm_reply' });
    const huge = JSON.stringify({ x: 'y'.repeat(WEBHOOK_LIMITS.text) });
    expect(
      replyOf({
        type: 'interactive',
        interactive: { type: 'nfm_reply', nfm_reply: { name: 'flow', body: 'Sent', response_json: huge } },
      }).text,
      'an answer over the bound is not cut into broken JSON',
    ).to.equal('Sent');
  });

  it('When strings are too long, then a person’s text is cut and an id is refused', () => {
    const long = message({ type: 'text', text: { body: '😀'.repeat(WEBHOOK_LIMITS.text) } });
    const text = (only(long) as MessageEvent).text!;
    expect(text.length).to.be.at.most(WEBHOOK_LIMITS.text);
    expect(text).to.match(/^(😀)+$/u, 'never half a surrogate pair');
    const status = (callbackData: string, id = 'wamid.s') =>
      delivery({
        statuses: [
          { id, status: 'read', timestamp: '1', recipient_id: '1', biz_opaque_callback_data: callbackData },
        ],
      });
    expect(only(status('x'.repeat(513)))).not.to.have.property('callbackData');
    expect(parseWebhook(status('m', `wamid.${'x'.repeat(300)}`)).events).to.have.length(0);
  });

  it('When the payload is hostile in any place, then nothing throws and only well-formed events come out', () => {
    const base = message({ type: 'text', text: { body: 'ok' } });
    const bodies: unknown[] = [
      undefined,
      null,
      'whatsapp_business_account',
      [],
      { object: 'page', entry: base.entry },
      { object: 'whatsapp_business_account', entry: 'x' },
      { object: 'whatsapp_business_account', entry: [{ changes: {} }] },
      delivery({ statuses: 'x', messages: { 0: {} } }),
      delivery({ messages: [{}] }, 1001),
      delivery({ messages: [{}] }, '../1001'),
      delivery({ messages: [{}] }, { $gt: '' }),
      JSON.parse('{"object":"whatsapp_business_account","entry":[{"__proto__":{"changes":[1]}}]}'),
      ...HOSTILE_LIST_ENTRIES,
    ];
    for (const hostile of HOSTILE_LIST_ENTRIES) {
      bodies.push(delivery({ statuses: [hostile], messages: [hostile], contacts: [hostile] }));
      bodies.push(message({ type: 'text', text: hostile, context: hostile }));
      bodies.push(message({ type: 'image', image: hostile }));
      bodies.push(message({ type: 'location', location: hostile }));
      bodies.push(message({ type: 'contacts', contacts: [hostile] }));
      bodies.push(message({ type: 'reaction', reaction: hostile }));
      bodies.push(message({ type: hostile }));
      bodies.push(
        delivery({ statuses: [{ id: 'wamid.s', status: 'read', timestamp: hostile, recipient_id: '1' }] }),
      );
      bodies.push(
        delivery({
          statuses: [
            { id: 'wamid.s', status: 'failed', timestamp: '1', recipient_id: '1', errors: [hostile] },
          ],
        }),
      );
    }
    bodies.push(message({ type: 'text', text: { body: 'lone \uD800 surrogate' } }));
    bodies.push(message({ type: 'location', location: { latitude: 'NaN', longitude: Infinity } }));
    bodies.push(message({ type: 'text', text: { body: 'x' }, timestamp: '-1' }));
    bodies.push(message({ type: 'text', text: { body: 'x' }, from: '+1555' }));
    bodies.push(message({ type: 'Text<script>', text: { body: 'x' } }));
    for (const body of bodies) {
      const parsed = parseWebhook(body);
      for (const event of parsed.events) {
        expect(event.phoneNumberId).to.match(/^\d+$/);
        expect(event.wamid).to.match(/^wamid\./);
        expect(Number.isSafeInteger(event.timestampMs)).to.equal(true);
        if (event.kind === 'message') {
          expect(event.from ?? event.userId).to.match(/^(\d+|[A-Z]{2}\.[A-Z0-9.]+)$/i);
          expect(event.type).to.match(/^[a-z_]+$/);
          if (event.text !== undefined)
            expect(event.text)
              .to.be.a('string')
              .and.not.match(/[\uD800-\uDFFF]/);
          if (event.location) expect(Number.isFinite(event.location.latitude)).to.equal(true);
        }
      }
    }
    expect(
      parseWebhook(message({ type: 'text', text: { body: 'lone \uD800' } })).events[0],
    ).not.to.have.property('text');
  });

  it('When a delivery is over the bounds, then only the first items of each list are read', () => {
    const statuses = Array.from({ length: WEBHOOK_LIMITS.itemsPerChange + 5 }, (_, i) => ({
      id: `wamid.${i}`,
      status: 'delivered',
      timestamp: '1',
      recipient_id: '1',
    }));
    const parsed = parseWebhook(delivery({ statuses }));
    expect(parsed.events).to.have.length(WEBHOOK_LIMITS.itemsPerChange);
    expect(parsed.phoneNumberIds).to.deep.equal(['1001']);
  });

  it('When a change names no number, then it is skipped and counted', () => {
    const parsed = parseWebhook(
      delivery({ messages: [{ from: '1', id: 'wamid.x', timestamp: '1', type: 'text' }] }, ''),
    );
    expect(parsed).to.deep.equal({ events: [], phoneNumberIds: [], skipped: 1 });
  });
});
