import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  S_WHATSAPP_NET,
  USyncQuery,
  USyncUser,
  getBinaryNodeChild,
  type BinaryNode,
} from '@whiskeysockets/baileys';
import { startSimulator, type SimulatorHandle } from '../../src/index.js';
import { freePort, until, type TestDevice, linkTestDevice, startTestSimulator } from '@mgw/testing';

const ACCOUNT = '15550071001';
const SHOP = '15550071002';
const GUARDED = '15550071003';
const HIDDEN = '15550071004';

/** A username lookup as WhatsApp Web asks it: no jid, `<contact username pin/>`, LID addressing. */
function lookup(username: string, pin?: string): BinaryNode {
  return {
    tag: 'iq',
    attrs: { to: S_WHATSAPP_NET, type: 'get', xmlns: 'usync' },
    content: [
      {
        tag: 'usync',
        attrs: { context: 'interactive', mode: 'query', sid: `s${Math.random()}`, last: 'true', index: '0' },
        content: [
          {
            tag: 'query',
            attrs: {},
            content: [
              { tag: 'contact', attrs: { addressing_mode: 'lid' } },
              { tag: 'business', attrs: {}, content: [{ tag: 'verified_name', attrs: {} }] },
            ],
          },
          {
            tag: 'list',
            attrs: {},
            content: [
              {
                tag: 'user',
                attrs: {},
                content: [{ tag: 'contact', attrs: { username, ...(pin ? { pin } : {}) } }],
              },
            ],
          },
        ],
      },
    ],
  };
}

/** The answer's one `<user>`. */
const userOf = (answer: BinaryNode): BinaryNode =>
  getBinaryNodeChild(getBinaryNodeChild(getBinaryNodeChild(answer, 'usync'), 'list'), 'user')!;

describe('messenger-sim: usernames (a contact reached by @username, a PIN, its number hidden)', function () {
  this.timeout(30_000);
  let sim: SimulatorHandle;
  let device: TestDevice;
  const control = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${sim.controlUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  before(async () => {
    sim = await startTestSimulator();
    device = await linkTestDevice(sim, ACCOUNT);
  });
  after(async () => {
    await device?.end();
    await sim.close();
  });

  it('When contacts are given usernames through POST /contacts, then bad ones, taken ones and PINs that are no key are refused', async () => {
    const shop = await control('POST', '/contacts', { phone: SHOP, username: '@Alice.Shop' });
    expect(shop.status).to.equal(200);
    expect(shop.body).to.include({ phone: SHOP, username: 'alice.shop' });
    expect(shop.body).to.not.have.property('usernamePin');
    const guarded = await control('POST', '/contacts', {
      phone: GUARDED,
      username: 'guarded_1',
      usernamePin: '0420',
    });
    expect(guarded.body).to.include({ username: 'guarded_1', usernamePin: '0420' });
    const hidden = await control('POST', '/contacts', {
      phone: HIDDEN,
      username: 'hidden.one',
      hidePhone: true,
    });
    expect(hidden.body).to.include({ username: 'hidden.one', hidePhone: true, addressing: 'lid' });

    for (const username of ['ab', '.alice', 'al..ice', 'alice.', '12345', 'al ice', 42])
      expect(
        (await control('POST', '/contacts', { phone: '15550071099', username })).status,
        String(username),
      ).to.equal(400);
    expect(
      (await control('POST', '/contacts', { phone: '15550071099', username: 'alice.shop' })).status,
    ).to.equal(409);
    expect((await control('POST', '/contacts', { phone: SHOP, username: 'alice.shop' })).status).to.equal(
      200,
    );
    expect((await control('POST', '/contacts', { phone: SHOP, usernamePin: '12345' })).status).to.equal(400);
    expect(
      (await control('POST', '/contacts', { phone: '15550071098', usernamePin: '1234' })).status,
    ).to.equal(400);
  });

  it('When the linked device looks usernames up, then found names the LID (and the number unless hidden), a missing or wrong PIN is a user without a jid, an unknown one is "out"', async () => {
    const { body: shop } = await control('POST', '/contacts', { phone: SHOP });
    const { body: hidden } = await control('POST', '/contacts', { phone: HIDDEN });
    const { body: guarded } = await control('POST', '/contacts', { phone: GUARDED });
    const sock = device.sock!;

    const found = userOf(await sock.query(lookup('alice.shop')));
    expect(found.attrs).to.deep.equal({ jid: `${String(shop.lid)}@lid`, pn_jid: `${SHOP}@s.whatsapp.net` });
    expect(getBinaryNodeChild(found, 'contact')!.attrs).to.deep.equal({ type: 'in', username: 'alice.shop' });
    expect(getBinaryNodeChild(found, 'business')).to.not.equal(undefined);
    // Asked as typed: WhatsApp's usernames are lower case.
    expect(userOf(await sock.query(lookup('@ALICE.shop'))).attrs.jid).to.equal(`${String(shop.lid)}@lid`);

    expect(userOf(await sock.query(lookup('hidden.one'))).attrs).to.deep.equal({
      jid: `${String(hidden.lid)}@lid`,
    });

    for (const pin of [undefined, '1111']) {
      const needsPin = userOf(await sock.query(lookup('guarded_1', pin)));
      expect(needsPin.attrs, String(pin)).to.deep.equal({});
      expect(getBinaryNodeChild(needsPin, 'contact')!.attrs).to.deep.equal({
        type: 'in',
        username: 'guarded_1',
      });
    }
    expect(userOf(await sock.query(lookup('guarded_1', '0420'))).attrs.jid).to.equal(
      `${String(guarded.lid)}@lid`,
    );

    const unknown = userOf(await sock.query(lookup('nobody.here')));
    expect(unknown.attrs).to.deep.equal({});
    expect(getBinaryNodeChild(unknown, 'contact')!.attrs).to.deep.equal({
      type: 'out',
      username: 'nobody.here',
    });

    // Baileys rc14's own usync parser drops the user without a jid: "PIN required" reads as nothing.
    const parsed = await sock.executeUSyncQuery(
      new USyncQuery().withContactProtocol().withUser(new USyncUser().withUsername('guarded_1')),
    );
    expect(parsed?.list).to.deep.equal([]);

    const lookups = await control('GET', `/accounts/${ACCOUNT}/username-lookups`);
    expect(lookups.body.count).to.equal(8);
    expect((lookups.body.queries as { answer: string }[]).map((q) => q.answer)).to.deep.equal([
      'found',
      'found',
      'found',
      'pin_required',
      'pin_required',
      'found',
      'not_found',
      'pin_required',
    ]);
    // Username lookups are not number lookups.
    expect((await control('GET', `/accounts/${ACCOUNT}/contact-lookups`)).body.count).to.equal(0);
  });

  it('When a contact with a username writes, then its message stanza names it (`username`), and one without none', async () => {
    const seen: Record<string, string | undefined> = {};
    device.sock!.ws.on('CB:message', (n: BinaryNode) => {
      seen[n.attrs.id!] = n.attrs.username;
    });
    const { body: withName } = await control('POST', `/contacts/${SHOP}/send`, {
      to: ACCOUNT,
      text: 'hi from the shop',
    });
    await control('POST', '/contacts', { phone: '15550071005' });
    const { body: without } = await control('POST', `/contacts/15550071005/send`, {
      to: ACCOUNT,
      text: 'hi',
    });
    await until(() => String(without.id) in seen && String(withName.id) in seen, 10_000, 'both stanzas');
    expect(seen[String(withName.id)]).to.equal('alice.shop');
    expect(seen[String(without.id)]).to.equal(undefined);
  });

  it('When a username is removed, then a lookup of it answers "out"', async () => {
    expect((await control('POST', '/contacts', { phone: SHOP, username: null })).body).to.not.have.property(
      'username',
    );
    const gone = userOf(await device.sock!.query(lookup('alice.shop')));
    expect(getBinaryNodeChild(gone, 'contact')!.attrs.type).to.equal('out');
  });

  it('When the simulator restarts on its state file, then usernames and their PINs are still there', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'mgw-sim-usernames-'));
    const stateFile = path.join(dir, 'state.json');
    const port = await freePort();
    let other = await startSimulator({ port, stateFile });
    try {
      const post = async (body: unknown) =>
        (await fetch(`${other.controlUrl}/contacts`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }).then((r) => r.json())) as Record<string, unknown>;
      await post({ phone: '15550071201', username: 'kept.one', usernamePin: '1357' });
      await other.close();
      other = await startSimulator({ port, stateFile });
      expect(await post({ phone: '15550071201' })).to.include({ username: 'kept.one', usernamePin: '1357' });
    } finally {
      await other.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
