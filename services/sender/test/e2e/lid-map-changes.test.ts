import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { useStack, waitFor } from '@mgw/testing';

interface ContactView {
  phone: string;
  lid: string;
}
type Data = Record<string, unknown>;

/**
 * WhatsApp 2026 (whatsmeow 563bcaa0): a phone <-> LID pair learnt replaces the pairs it contradicts,
 * in the device's map (libs/store contact-identities) and in Baileys' `lid-mapping` keys and cache
 * (patches/, lid-mapping.js). Without it, a contact that changed its number kept its old number's
 * entry (a send to the old number went to it, whoever has the number now), and a number registered
 * again left its old LID naming it (the old account's messages came "from" the number's new owner).
 */
describe('e2e: a contact changes its number, a number is registered again — the phone <-> LID pairs follow (real services, simulator)', function () {
  this.timeout(150_000);
  const stack = useStack({ sim: { receiptDelayMs: 50, readDelayMs: 150 } });
  const account = '15550680001';

  before(async () => {
    await stack().linkByQr(account);
  });

  const contact = (phone: string, extra: Data = {}) =>
    stack().simApi<ContactView>('POST', '/contacts', { phone, ...extra });
  const identity = (field: string) => stack().redis.hget(keys.contactIdentities(stack().deviceId), field);
  /** Whether Baileys' `lid-mapping` keys (sealed values) hold this entry. */
  const baileysHas = async (id: string) =>
    (await stack().redis.hexists(keys.authKeys(stack().deviceId, 'lid-mapping'), id)) === 1;
  /** The contact writes `text`; answers the inbound record once the gateway kept it. */
  async function writes(phone: string, text: string): Promise<Data> {
    const { id } = await stack().simApi<{ id: string }>('POST', `/contacts/${phone}/send`, {
      to: account,
      text,
    });
    let found: Data | undefined;
    await waitFor(
      async () => {
        const page = await stack().api<{ data: { messages: Data[] } }>(
          'GET',
          '/messages?direction=inbound&limit=20',
        );
        found = page.body.data.messages.find((m) => m.platformMessageId === id);
        return found !== undefined;
      },
      { what: `the message of ${phone} recorded` },
    );
    return found!;
  }
  async function sendRead(to: string, text: string): Promise<Data> {
    const res = await stack().api<{ messageId: string }>('POST', '/send', { to, text });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    const record = async () =>
      (await stack().api<{ data: Data }>('GET', `/messages/${res.body.messageId}`)).body.data;
    await waitFor(async () => (await record()).status === 'read', { what: `${to}: read` });
    return record();
  }

  it('When a contact changes its number and WhatsApp tells the device its LID with the new number, then the old number no longer names it: a send to the old number reaches whoever has it now, a send to the new one reaches the contact', async () => {
    const before = await contact('15550680002', { addressing: 'lid' });
    const lid = `${before.lid}@lid`;
    // It writes: the device learns its pair from the message (sender_pn).
    expect((await writes(before.phone, 'hello')).contact).to.deep.equal({ phone: before.phone, lid });
    await waitFor(
      async () => (await baileysHas(before.phone)) && (await identity(`p:${before.phone}`)) === before.lid,
      {
        what: 'the pair learnt',
      },
    );

    // And the device wrote to the number (its lookup cached: the next send asks WhatsApp nothing).
    await sendRead(before.phone, 'a first one to your number');

    const moved = await stack().simApi<ContactView>('POST', `/contacts/${before.phone}/number`, {
      phone: '15550680003',
    });
    expect(moved).to.include({ phone: '15550680003', lid: before.lid });
    await stack().simApi('POST', `/contacts/${moved.phone}/lid-mapping`, { to: account });
    await waitFor(async () => (await identity(`l:${before.lid}`)) === moved.phone, { what: 'the new pair' });
    expect(await identity(`p:${before.phone}`), 'our map: the old number').to.equal(null);
    await waitFor(async () => !(await baileysHas(before.phone)), { what: "Baileys' old number entry gone" });
    await waitFor(
      async () => (await stack().redis.exists(keys.contact(stack().deviceId, before.phone))) === 0,
      {
        what: "the old number's cached lookup (naming the LID) dropped",
      },
    );

    // The old number is someone else's now (a new account, a new LID).
    const next = await sendRead(before.phone, 'are you the new owner?');
    const owner = await contact(before.phone);
    expect(owner.lid).to.not.equal(before.lid);
    expect(next.contact).to.deep.equal({ phone: before.phone, lid: `${owner.lid}@lid` });
    expect((await stack().inbox(before.phone)).map((m) => m.text)).to.include('are you the new owner?');
    expect((await stack().inbox(moved.phone)).map((m) => m.text)).to.not.include('are you the new owner?');

    const again = await sendRead(moved.phone, 'your new number works');
    expect(again.contact).to.deep.equal({ phone: moved.phone, lid });
    expect((await stack().inbox(moved.phone)).map((m) => m.text)).to.include('your new number works');
  });

  it("When a number is registered again (a new LID) and the device learns it, then the old LID no longer names the number: the old account's next message is not attributed to the number's new owner", async () => {
    const old = await contact('15550680004', { addressing: 'lid' });
    const oldLid = `${old.lid}@lid`;
    await writes(old.phone, 'hi, it is me');
    await waitFor(async () => (await identity(`l:${old.lid}`)) === old.phone, { what: 'the old pair' });

    // The old account moves away and hides its number; its number is registered again.
    await stack().simApi('POST', `/contacts/${old.phone}/number`, { phone: '15550680005' });
    await contact('15550680005', { hidePhone: true });
    const owner = await contact(old.phone);
    await stack().simApi('POST', `/contacts/${owner.phone}/lid-mapping`, { to: account });
    await waitFor(async () => (await identity(`p:${owner.phone}`)) === owner.lid, { what: 'the new pair' });
    expect(await identity(`l:${old.lid}`), 'the old LID stays known, without the number').to.equal('');
    await waitFor(async () => !(await baileysHas(`${old.lid}_reverse`)), {
      what: "Baileys' old reverse entry gone",
    });

    const got = await writes('15550680005', 'still me, new number');
    expect(got.contact).to.deep.equal({ lid: oldLid });
    expect(got).to.not.have.property('from');
  });
});
