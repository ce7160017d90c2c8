import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { USyncQuery, USyncUser, type BinaryNode } from '@whiskeysockets/baileys';
import type { SimulatorHandle } from '../../src/index.js';
import { TestDevice, until, startTestSimulator, simControl } from '@mgw/testing';

const ACCOUNT = '15550006101';
const CONTACT = '15550006102';
const STRANGER = '15550006103';

interface SaltSync {
  operation: number;
  syncActionData?: Uint8Array;
}

/** The last length-delimited `field` of an encoded protobuf message (test-side reader). */
function field(bytes: Uint8Array, wanted: number): Buffer | undefined {
  let pos = 0;
  let found: Buffer | undefined;
  const varint = () => {
    let value = 0;
    let scale = 1;
    for (;;) {
      const b = bytes[pos++]!;
      value += (b & 0x7f) * scale;
      scale *= 128;
      if (b < 0x80) return value;
    }
  };
  while (pos < bytes.length) {
    const key = varint();
    const wire = key % 8;
    if (wire === 0) varint();
    else if (wire === 2) {
      const length = varint();
      if (Math.floor(key / 8) === wanted) found = Buffer.from(bytes.subarray(pos, pos + length));
      pos += length;
    } else pos += wire === 1 ? 8 : 4;
  }
  return found;
}

describe('messenger-sim: first contacts — the NCT salt, cstokens, strict mode, LID-first stanzas and LID number lookups (real Baileys client)', function () {
  this.timeout(60_000);
  let sim: SimulatorHandle;
  let device: TestDevice;
  const saltSyncs: SaltSync[] = [];
  const call = (method: string, path: string, body?: unknown) => simControl(sim)(method, path, body);
  const lidOf = (phone: string) => `${sim.upsertContact({ phone }).lid}@lid`;
  const lastStanza = async () => {
    const { messages } = (await call('GET', `/accounts/${ACCOUNT}/direct-messages`)).body as {
      messages: Record<string, unknown>[];
    };
    return messages[messages.length - 1]!;
  };
  /** Sends a text to `to` with Baileys' relay and the given extras; answers the ack's error code, if any. */
  const relay = async (to: string, attrs: Record<string, string>, nodes: BinaryNode[]) => {
    const sock = device.sock!;
    const id = sock.generateMessageTag();
    const ack = new Promise<BinaryNode>((resolve) => sock.ws.once(`TAG:${id}`, resolve));
    await sock.relayMessage(
      to,
      { conversation: 'hello' },
      { messageId: id, additionalAttributes: attrs, additionalNodes: nodes },
    );
    return (await ack).attrs.error;
  };

  before(async () => {
    sim = await startTestSimulator();
    sim.upsertContact({ phone: ACCOUNT, name: 'First contacts' });
    device = new TestDevice(sim.info);
    device.connect();
    const qr = await device.nextQr();
    const opened = device.waitForOpen(20_000);
    expect(
      (await call('POST', '/phone/link', { qr, phone: ACCOUNT, name: 'First contacts' })).status,
    ).to.equal(200);
    await opened;
    device.sock!.ev.on('nct-salt.sync' as never, (m: SaltSync) => saltSyncs.push(m));
  });
  after(async () => {
    await device?.end();
    await sim.close();
  });

  it('When a number is looked up with addressing_mode="lid", then the answer names it by its LID with pn_jid and echoes the number; a number not on WhatsApp comes with pn_jid alone', async () => {
    sim.upsertContact({ phone: '15550006199', onWhatsApp: false });
    const query = new USyncQuery();
    query.protocols.push({
      name: 'contact',
      getQueryElement: () => ({ tag: 'contact', attrs: { addressing_mode: 'lid' } }),
      getUserElement: (u) => ({ tag: 'contact', attrs: {}, content: `${u.phone}@c.us` }),
      parser: () => null,
    });
    for (const phone of [CONTACT, '15550006199']) query.withUser(new USyncUser().withPhone(`+${phone}`));
    let raw: BinaryNode | undefined;
    query.parseUSyncQueryResult = (result) => ((raw = result), { list: [], sideList: [] });
    await device.sock!.executeUSyncQuery(query);
    const list = (raw!.content as BinaryNode[])[0]!.content as BinaryNode[];
    const users = (list[0]!.content as BinaryNode[]).map((u) => ({
      attrs: u.attrs,
      contact: (u.content as BinaryNode[])[0]!,
    }));
    expect(users[0]!.attrs).to.deep.equal({ jid: lidOf(CONTACT), pn_jid: `${CONTACT}@s.whatsapp.net` });
    expect(users[0]!.contact.attrs).to.deep.equal({ type: 'in' });
    expect(Buffer.from(users[0]!.contact.content as Uint8Array).toString()).to.equal(`+${CONTACT}@c.us`);
    expect(users[1]!.attrs).to.deep.equal({ pn_jid: '15550006199@s.whatsapp.net' });
    expect(users[1]!.contact.attrs).to.deep.equal({ type: 'out' });
  });

  it('When strict first contacts are on, then a first contact without a token is refused 463, one with a cstoken of the wrong salt too, and one with HMAC(salt, LID) to the LID with its phone goes through; a peer_recipient_pn of another phone is 479', async () => {
    expect((await call('POST', '/reachout/strict', { on: true, phone: ACCOUNT })).body).to.deep.equal({
      all: false,
      phones: [ACCOUNT],
    });
    const salt = Buffer.from(
      ((await call('GET', `/accounts/${ACCOUNT}/nct-salt`)).body as { salt: string }).salt,
      'base64',
    );
    const lid = lidOf(CONTACT);
    const pn = { peer_recipient_pn: `${CONTACT}@s.whatsapp.net` };
    const cstoken = (key: Buffer) => ({
      tag: 'cstoken',
      attrs: {},
      content: createHmac('sha256', key).update(lid).digest(),
    });

    expect(await relay(lid, pn, [])).to.equal('463');
    expect(await lastStanza()).to.deep.include({ to: lid, token: 'none', firstContact: true, error: 463 });
    expect(await relay(lid, pn, [cstoken(Buffer.alloc(32, 7))])).to.equal('463');
    expect(await lastStanza()).to.deep.include({ token: 'cstoken', cstokenValid: false, error: 463 });
    expect(await relay(lid, { peer_recipient_pn: `${STRANGER}@s.whatsapp.net` }, [cstoken(salt)])).to.equal(
      '479',
    );
    expect(await relay(lid, pn, [cstoken(salt)])).to.equal(undefined);
    expect(await lastStanza()).to.deep.include({
      to: lid,
      peerRecipientPn: pn.peer_recipient_pn,
      recipient: CONTACT,
      token: 'cstoken',
      cstokenValid: true,
      firstContact: true,
    });
    await until(async () => (await sim.inbox(CONTACT)).length === 1, 10_000, 'the message in the inbox');
    // No longer a first contact: no token needed.
    expect(await relay(lid, pn, [])).to.equal(undefined);
    await call('POST', '/reachout/strict', { on: false });
  });

  it('When the phone withdraws and then sets the NCT salt through the app-state sync, then the device gets nct_salt_sync REMOVE, then SET with the new salt in field 80', async () => {
    await call('POST', `/accounts/${ACCOUNT}/app-state/key-share`);
    await until(() => !!device.auth.creds.myAppStateKeyId, 10_000, 'the app-state key at the device');
    await call('POST', `/accounts/${ACCOUNT}/nct-salt`, { op: 'remove' });
    await until(() => saltSyncs.length === 1, 10_000, 'the REMOVE at the device');
    expect(saltSyncs[0]!.operation).to.equal(1);
    await call('POST', `/accounts/${ACCOUNT}/nct-salt`, { op: 'set' });
    await until(() => saltSyncs.length === 2, 10_000, 'the SET at the device');
    const salt = ((await call('GET', `/accounts/${ACCOUNT}/nct-salt`)).body as { salt: string }).salt;
    const value = field(saltSyncs[1]!.syncActionData!, 2)!;
    expect(saltSyncs[1]!.operation).to.equal(0);
    expect(field(field(value, 80)!, 1)!.toString('base64')).to.equal(salt);
  });
});
