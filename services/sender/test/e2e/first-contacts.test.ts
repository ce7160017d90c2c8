import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { keys } from '@mgw/contracts';
import { deliverNctSalt, useStack, waitFor } from '@mgw/testing';

interface DirectMessage {
  id: string;
  to: string;
  peerRecipientPn?: string;
  recipient?: string;
  token: 'tctoken' | 'cstoken' | 'none';
  tctokenValid: boolean;
  cstokenValid?: boolean;
  firstContact: boolean;
  error?: number;
}
type Data = Record<string, unknown>;

/**
 * First contacts and LID-first one-to-one messages, 2026 (docs/contacts-and-identities.md): with
 * the simulator's strict first contacts on, WhatsApp refuses (463) a first contact that carries no
 * tctoken and no cstoken; the phone's history sync brings the account's NCT salt, from which the
 * gateway makes the cstoken (HMAC-SHA256 of the salt over the contact's LID). Every one-to-one
 * message goes to the contact's LID with `peer_recipient_pn` = its phone JID once the LID is known.
 */
describe('e2e: first contacts with a cstoken, LID-first sends, and a 463 for a missing token told apart from capping (real services, simulator)', function () {
  this.timeout(240_000);
  const stack = useStack({ sim: { receiptDelayMs: 50, readDelayMs: 150 } });
  const account = '15551680001';
  /** The simulator's LID of each contact met (`<digits>@lid`). */
  const lids = new Map<string, string>();

  before(async () => {
    await stack().linkByQr(account);
    await stack().simApi('POST', '/reachout/strict', { on: true, phone: account });
  });

  async function lidOf(phone: string): Promise<string> {
    if (!lids.has(phone)) {
      const view = await stack().simApi<{ lid: string }>('POST', '/contacts', { phone });
      lids.set(phone, `${view.lid}@lid`);
    }
    return lids.get(phone)!;
  }
  async function send(to: string | string[], text: string): Promise<string[]> {
    const res = await stack().api<{ messageId: string; messageIds?: string[] }>('POST', '/send', {
      to,
      text,
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    return res.body.messageIds ?? [res.body.messageId];
  }
  async function record(id: string): Promise<Data> {
    return (await stack().api<{ data: Data }>('GET', `/messages/${id}`)).body.data;
  }
  async function settled(id: string, statuses: string[]): Promise<Data> {
    await waitFor(async () => statuses.includes(String((await record(id)).status)), {
      timeoutMs: 60_000,
      what: `${id} ${statuses.join('/')}`,
    });
    return record(id);
  }
  async function directMessages(): Promise<DirectMessage[]> {
    return (
      await stack().simApi<{ messages: DirectMessage[] }>('GET', `/accounts/${account}/direct-messages`)
    ).messages;
  }
  async function stanzaOf(platformMessageId: string): Promise<DirectMessage> {
    const found = (await directMessages()).filter((m) => m.id === platformMessageId);
    expect(found, `the stanzas of ${platformMessageId}`).to.have.length(1);
    return found[0]!;
  }
  async function sending(): Promise<{
    restriction?: unknown;
    firstContactsToday: number;
    health: { reasons: { code: string }[] };
  }> {
    return (await stack().api<{ sending: never }>('GET', '/status')).body.sending;
  }

  it('When strict first contacts meet a device with no NCT salt, then the first contact fails first_contact_token_missing (463) and the device is neither paused nor marked down; once the history sync brought the salt, first contacts carry a valid cstoken and arrive', async () => {
    const [early, later] = ['15551680101', '15551680102'];
    const [refused] = await send(early, 'hello, first time');
    const failed = await settled(refused!, ['failed']);
    expect(failed.error).to.equal('first_contact_token_missing');
    // LID first even so: the sender's lookup taught the device the contact's LID.
    const stanza = await stanzaOf(String(failed.platformMessageId));
    expect(stanza).to.deep.include({
      to: await lidOf(early),
      peerRecipientPn: `${early}@s.whatsapp.net`,
      token: 'none',
      firstContact: true,
      error: 463,
    });
    // Not about the account: no pause, no refusal counted against its health.
    const now = await sending();
    expect(now.restriction).to.equal(undefined);
    expect(now.health.reasons.map((r) => r.code)).to.not.include('refusals_463');
    // Counted by its reason, and said once in the sender's log.
    const sender = stack().processes.find((p) => p.name.startsWith('sender'))!;
    const metrics = await (await fetch(`http://127.0.0.1:${sender.metricsPort}/metrics`)).text();
    expect(metrics).to.match(
      /^mgw_jobs_failed_total\{queue_type="send",reason="first_contact_token_missing"\} 1$/m,
    );
    expect(
      sender.output.filter((l) => l.includes('ack 463 on a first contact sent without a privacy token')),
    ).to.have.length(1);
    expect(await stack().inbox(early)).to.deep.equal([]);

    await deliverNctSalt(stack(), account);
    for (const [to, text] of [
      [later, 'hello, with a token'],
      [early, 'hello again, with a token'],
    ] as const) {
      const [id] = await send(to, text);
      const done = await settled(id!, ['delivered', 'read']);
      expect(done).to.include({ to });
      expect(done.contact).to.deep.equal({ phone: to, lid: await lidOf(to) });
      expect(await stanzaOf(String(done.platformMessageId))).to.deep.include({
        to: await lidOf(to),
        peerRecipientPn: `${to}@s.whatsapp.net`,
        token: 'cstoken',
        cstokenValid: true,
        firstContact: true,
      });
      expect((await stack().inbox(to)).map((m) => [m.id, m.text, m.duplicates ?? 0])).to.deep.equal([
        [done.platformMessageId, text, 0],
      ]);
    }
  });

  it('When the NCT salt comes in a history chunk sent inline (initialHistBootstrapInlinePayload, no media key), then the device keeps it and a first contact carries a valid cstoken: no 463, no pause', async () => {
    const phone = '15551680601';
    const deviceId = 'fc-inline';
    const token = await stack().createToken(deviceId);
    await stack().linkByQr(phone, 'Inline salt', token);
    await stack().simApi('POST', '/reachout/strict', { on: true, phone });
    await deliverNctSalt(stack(), phone, deviceId, 'inline');
    const contact = '15551680602';
    const res = await stack().api<{ messageId: string }>('POST', '/send', { to: contact, text: 'hi' }, token);
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    let done: Data = {};
    await waitFor(
      async () => {
        done = (await stack().api<{ data: Data }>('GET', `/messages/${res.body.messageId}`, undefined, token))
          .body.data;
        return ['delivered', 'read', 'failed'].includes(String(done.status));
      },
      { timeoutMs: 60_000, what: 'the first contact settled' },
    );
    expect(done.status, JSON.stringify(done)).to.be.oneOf(['delivered', 'read']);
    const stanzas = (
      await stack().simApi<{ messages: DirectMessage[] }>('GET', `/accounts/${phone}/direct-messages`)
    ).messages;
    expect(stanzas.filter((m) => m.id === done.platformMessageId)).to.deep.equal([
      stanzas.find((m) => m.id === done.platformMessageId),
    ]);
    expect(stanzas.find((m) => m.id === done.platformMessageId)).to.deep.include({
      to: await lidOf(contact),
      token: 'cstoken',
      cstokenValid: true,
      firstContact: true,
    });
    expect(stanzas.filter((m) => m.error === 463)).to.deep.equal([]);
    const status = (
      await stack().api<{ sending: { restriction?: unknown } }>('GET', '/status', undefined, token)
    ).body;
    expect(status.sending.restriction).to.equal(undefined);
  });

  it('When the account\u2019s NCT salt is only in app state (set before the device linked: no history chunk carries it, no server_sync told of it), then the device asks for it (a resync of regular_high) before its first contact goes, and the message carries a valid cstoken: no 463', async () => {
    const phone = '15551680701';
    const deviceId = 'fc-appstate';
    const token = await stack().createToken(deviceId);
    await stack().linkByQr(phone, 'App-state salt', token);
    await stack().simApi('POST', '/reachout/strict', { on: true, phone });
    const chunk = await stack().simApi<{ nctSalt: boolean }>('POST', `/accounts/${phone}/history-sync`, {
      conversations: [],
      withoutSalt: true,
    });
    expect(chunk.nctSalt).to.equal(false);
    await stack().simApi('POST', `/accounts/${phone}/app-state/key-share`);
    await stack().simApi('POST', `/accounts/${phone}/nct-salt`, { op: 'set', tell: false });
    expect(await stack().redis.hexists(keys.authKeys(deviceId, 'nct-salt'), 'salt')).to.equal(0);

    const contact = '15551680702';
    const res = await stack().api<{ messageId: string }>('POST', '/send', { to: contact, text: 'hi' }, token);
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    let done: Data = {};
    await waitFor(
      async () => {
        done = (await stack().api<{ data: Data }>('GET', `/messages/${res.body.messageId}`, undefined, token))
          .body.data;
        return ['delivered', 'read', 'failed'].includes(String(done.status));
      },
      { timeoutMs: 60_000, what: 'the first contact settled' },
    );
    expect(done.status, JSON.stringify(done)).to.be.oneOf(['delivered', 'read']);
    const stanzas = (
      await stack().simApi<{ messages: DirectMessage[] }>('GET', `/accounts/${phone}/direct-messages`)
    ).messages;
    expect(
      stanzas.map((m) => [m.id === done.platformMessageId, m.token, m.cstokenValid, m.error]),
    ).to.deep.equal([[true, 'cstoken', true, undefined]]);
    expect(await stack().redis.hexists(keys.authKeys(deviceId, 'nct-salt'), 'salt')).to.equal(1);
  });

  it('When a list of 50 new contacts goes out with strict first contacts, then each contact gets its message once, by its LID with its phone beside it and a valid cstoken, and no 463 comes back', async () => {
    await deliverNctSalt(stack(), account); // as the first test left it (each test may run alone)
    const phones = Array.from({ length: 50 }, (_, i) => `155516802${String(i).padStart(2, '0')}`);
    const ids = await send(phones, 'a list to new contacts');
    const records = await Promise.all(ids.map((id) => settled(id, ['sent', 'delivered', 'read', 'failed'])));
    expect(records.filter((r) => r.status === 'failed').map((r) => r.error)).to.deep.equal([]);
    const stanzas = new Map((await directMessages()).map((m) => [m.id, m]));
    for (const [i, r] of records.entries()) {
      const phone = phones[i]!;
      expect(r).to.include({ to: phone });
      expect(r.contact).to.deep.equal({ phone, lid: await lidOf(phone) });
      expect(stanzas.get(String(r.platformMessageId)), phone).to.deep.include({
        to: await lidOf(phone),
        peerRecipientPn: `${phone}@s.whatsapp.net`,
        token: 'cstoken',
        cstokenValid: true,
        firstContact: true,
      });
    }
    expect([...stanzas.values()].filter((m) => phones.includes(m.recipient ?? '') && m.error)).to.deep.equal(
      [],
    );
    for (const [i, phone] of phones.entries()) {
      const inbox = await stack().inbox(phone);
      expect(
        inbox.map((m) => [m.id, m.duplicates ?? 0]),
        phone,
      ).to.deep.equal([[records[i]!.platformMessageId, 0]]);
    }
  });

  it('When a contact first reached by its LID replies, then its reply and the sends after it are one chat, carry the trusted-contact token it issued, and are no first contact', async () => {
    await deliverNctSalt(stack(), account);
    const phone = '15551680301';
    const before = (await sending()).firstContactsToday;
    const [first] = await send(phone, 'hello from the shop');
    await settled(first!, ['delivered', 'read']);
    expect((await sending()).firstContactsToday, 'the first message: a first contact').to.equal(before + 1);
    await stack().simApi('POST', `/contacts/${phone}/send`, { to: account, text: 'hi shop' });
    await waitFor(
      async () =>
        ((await stack().api<{ data: { chats: Data[] } }>('GET', '/chats')).body.data.chats ?? []).some(
          (c) => c.id === phone && (c.lastMessage as Data | undefined)?.direction === 'inbound',
        ),
      { what: 'the reply in its chat' },
    );
    // The token the contact's phone issued when it wrote (its notification came before the message).
    const lid = await lidOf(phone);
    await waitFor(
      async () => (await stack().redis.hexists(keys.authKeys(stack().deviceId, 'tctoken'), lid)) === 1,
      {
        what: "the contact's tctoken kept",
      },
    );
    const [second] = await send(phone, 'thanks for writing back');
    const done = await settled(second!, ['delivered', 'read']);
    expect(await stanzaOf(String(done.platformMessageId))).to.deep.include({
      to: await lidOf(phone),
      token: 'tctoken',
      tctokenValid: true,
      firstContact: false,
    });
    const chats = (await stack().api<{ data: { chats: Data[] } }>('GET', '/chats?limit=100')).body.data.chats;
    const mine = chats.filter((c) => c.id === phone || c.id === lid);
    expect(mine.map((c) => c.id)).to.deep.equal([phone]);
    expect(mine[0]!.contact).to.deep.equal({ phone, lid });
    // The first-contact cap's count: the reply by the same contact made no second first contact.
    expect((await sending()).firstContactsToday).to.equal(before + 1);
  });

  it('When the phone withdraws the NCT salt through the app-state sync (nct_salt_sync REMOVE), then the device forgets it and a first contact fails first_contact_token_missing; a new salt set the same way (SET) gives first contacts a valid cstoken again', async () => {
    const saltKept = async () =>
      (await stack().redis.hexists(keys.authKeys(stack().deviceId, 'nct-salt'), 'salt')) === 1;
    await stack().simApi('POST', `/accounts/${account}/app-state/key-share`);
    await stack().simApi('POST', `/accounts/${account}/nct-salt`, { op: 'remove' });
    await waitFor(async () => !(await saltKept()), { what: 'the NCT salt forgotten' });
    const [refused] = await send('15551680401', 'hello, no token now');
    expect((await settled(refused!, ['failed'])).error).to.equal('first_contact_token_missing');

    await stack().simApi('POST', `/accounts/${account}/nct-salt`, { op: 'set' });
    await waitFor(saltKept, { what: 'the new NCT salt kept' });
    const [id] = await send('15551680402', 'hello, with the new salt');
    const done = await settled(id!, ['delivered', 'read']);
    expect(await stanzaOf(String(done.platformMessageId))).to.deep.include({
      token: 'cstoken',
      cstokenValid: true,
      firstContact: true,
    });
    expect((await sending()).restriction).to.equal(undefined);
  });

  it('When numbers are checked (POST /contacts/check), then WhatsApp\u2019s LID answer gives each number on it its LID and phone JID, and one not on it neither', async () => {
    await deliverNctSalt(stack(), account);
    const [on, off] = ['15551680501', '15551680502'];
    await stack().simApi('POST', '/contacts', { phone: off, onWhatsApp: false });
    const res = await stack().api<{ data: { results: Data[] } }>('POST', '/contacts/check', {
      phones: [on, off],
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.results).to.deep.equal([
      { phone: on, onWhatsApp: true, lid: await lidOf(on), phoneJid: `${on}@s.whatsapp.net` },
      { phone: off, onWhatsApp: false },
    ]);
    // The send that follows goes to the LID the check learnt, with no lookup of its own.
    const [id] = await send(on, 'checked, then written to');
    const done = await settled(id!, ['delivered', 'read']);
    expect(await stanzaOf(String(done.platformMessageId))).to.deep.include({
      to: await lidOf(on),
      peerRecipientPn: `${on}@s.whatsapp.net`,
    });
  });

  it("When the device's keys are read from Redis, then neither the NCT salt nor a cstoken made from it is there in the clear", async () => {
    await deliverNctSalt(stack(), account); // the device holds it (sealed) while its keys are read
    const { salt } = await stack().simApi<{ salt: string }>('GET', `/accounts/${account}/nct-salt`);
    const raw = Buffer.from(salt, 'base64');
    const cstoken = createHmac('sha256', raw)
      .update(await lidOf('15551680102'))
      .digest();
    const needles = [raw, cstoken].flatMap((b) => [
      b,
      Buffer.from(b.toString('base64')),
      Buffer.from(b.toString('base64url')),
      Buffer.from(b.toString('hex')),
    ]);
    const redis = stack().redis as Redis;
    /** Every field and value a key holds, as bytes (not DUMP: its RDB form may compress them). */
    const valuesOf = async (key: string): Promise<Buffer[]> => {
      const type = await redis.type(key);
      if (type === 'string') return [(await redis.getBuffer(key)) ?? Buffer.alloc(0)];
      if (type === 'hash')
        return Object.entries(await redis.hgetallBuffer(key)).flatMap(([f, v]) => [Buffer.from(f), v]);
      if (type === 'list') return redis.lrangeBuffer(key, 0, -1);
      if (type === 'set') return redis.smembersBuffer(key);
      if (type === 'zset') return redis.zrangeBuffer(key, 0, -1);
      if (type === 'stream') return (await redis.xrangeBuffer(key, '-', '+')).flatMap(([, fields]) => fields);
      return [];
    };
    const found: string[] = [];
    let cursor = '0';
    let scanned = 0;
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `*{${stack().deviceId}}*`, 'COUNT', 500);
      cursor = next;
      for (const key of batch) {
        scanned += 1;
        const values = await valuesOf(key);
        if (values.some((v) => needles.some((n) => v.includes(n)))) found.push(key);
      }
    } while (cursor !== '0');
    expect(scanned, 'keys of the device').to.be.greaterThan(10);
    expect(found).to.deep.equal([]);
  });

  it('When the account logs out, then its NCT salt is deleted with its credentials', async () => {
    await deliverNctSalt(stack(), account);
    const saltKey = keys.authKeys(stack().deviceId, 'nct-salt');
    const res = await stack().api<{ success: boolean }>('POST', '/disconnect');
    expect(res.body.success, JSON.stringify(res.body)).to.equal(true);
    await waitFor(async () => (await stack().redis.exists(saltKey, keys.authCreds(stack().deviceId))) === 0, {
      what: 'the salt and the credentials deleted',
    });
  });
});
