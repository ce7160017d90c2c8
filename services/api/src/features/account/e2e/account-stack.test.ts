import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import sharp from 'sharp';
import { ACCOUNT_ERRORS, keys } from '@mgw/contracts';
import { useStack, waitFor } from '@mgw/testing';
import { openApiProblem } from '../../../../test/helpers/openapi-check.js';

/**
 * The account capability's whole-stack route tests (the real client against the simulator):
 * - the profile, presence and the blocklist;
 * - the account's 2026 protocol changes: the about as a text status, a hidden number blocked by LID.
 */

type Json = Record<string, unknown>;
interface SimProfile {
  name: string;
  about: string | null;
  pictureUrl: string | null;
  picture: { bytes: number; base64: string } | null;
  blocked: { lid: string; phone: string | null }[];
  online: boolean;
}

/**
 * The account routes of the running gateway (API, connection and sender services, real Redis,
 * the real Baileys client against the simulator): the profile (name, about, photo by base64 and
 * by URL, removed), a contact's profile, presence (set, subscribe, presence.update events), and
 * the blocklist (block, unblock, a push from the phone, sends to a blocked number refused). Every
 * answer is checked against the OpenAPI document.
 */
describe('e2e: the account — profile, presence, blocking (real client, simulator)', function () {
  this.timeout(180_000);
  // One process for the four services (the same code): quicker to start on a busy machine.
  const stack = useStack({
    allInOne: true,
    env: { ALLOWED_PRIVATE_HOSTS: '127.0.0.1', RATE_LIMIT_ACCOUNT: '1000', RATE_LIMIT_MESSAGES: '1000' },
  });
  const account = '15552400001';
  const [friend, shop, spammer, other] = ['15552400011', '15552400012', '15552400013', '15552400014'];
  let photoServer: http.Server;
  let photoUrl = '';
  let png: Buffer;

  const api = async <T = Json>(method: string, path: string, body?: unknown) => {
    const res = await stack().api<T>(method, path, body);
    const problem = openApiProblem(
      `${stack().apiUrl}/api/messenger/v1${path}`,
      method,
      res.status,
      res.body,
      res.headers,
    );
    expect(problem, `${method} ${path}: ${problem}`).to.equal(undefined);
    return res;
  };
  const simProfile = () => stack().simApi<SimProfile>('GET', `/accounts/${account}/profile`);
  const events = async (type: string) =>
    (
      await api<{ data: { events: { type: string; data: Json }[] } }>(
        'GET',
        `/events?types=${type}&limit=200`,
      )
    ).body.data.events.map((e) => e.data);

  before(async () => {
    png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366cc' } })
      .png()
      .toBuffer();
    photoServer = http.createServer((req, res) => {
      if (req.url === '/photo.png') res.writeHead(200, { 'content-type': 'image/png' }).end(png);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => photoServer.listen(0, '127.0.0.1', resolve));
    photoUrl = `http://127.0.0.1:${(photoServer.address() as AddressInfo).port}`;
    for (const phone of [friend, shop, spammer, other]) await stack().simApi('POST', '/contacts', { phone });
    await stack().linkByQr(account, 'Acct Before');
  });
  after(() => new Promise<void>((resolve) => (photoServer ? photoServer.close(() => resolve()) : resolve())));

  it('When the name and about are changed, then WhatsApp has them, GET /profile and GET /status show them', async () => {
    const changed = await api<{ data: { profile: Json } }>('PATCH', '/profile', {
      name: 'Acme Support',
      about: 'We answer within a day',
    });
    expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
    expect(changed.body.data.profile).to.deep.include({ phone: account, about: 'We answer within a day' });
    await waitFor(async () => (await simProfile()).name === 'Acme Support', {
      timeoutMs: 10_000,
      what: 'the name at WhatsApp (presence name)',
    });
    expect((await simProfile()).about).to.equal('We answer within a day');
    await waitFor(async () => (await api<Json>('GET', '/status')).body.name === 'Acme Support', {
      timeoutMs: 10_000,
      what: 'the name on GET /status',
    });
    const read = await api<{ data: { profile: Json } }>('GET', '/profile');
    expect(read.body.data.profile).to.deep.equal({
      phone: account,
      name: 'Acme Support',
      about: 'We answer within a day',
    });

    const blank = await api<{ details: { path: string[] }[] }>('PATCH', '/profile', { name: '   ' });
    expect(blank.status).to.equal(400);
    expect(blank.body.details[0]!.path).to.deep.equal(['name']);
    const long = await api<{ details: { path: string[] }[] }>('PATCH', '/profile', {
      about: 'x'.repeat(140),
    });
    expect(long.status).to.equal(400);
    expect(long.body.details[0]!.path).to.deep.equal(['about']);
    expect((await api('PATCH', '/profile', {})).status).to.equal(400);
  });

  it('When a photo is set by base64 and by URL, then WhatsApp gets a JPEG, /status shows it; removed, it is gone', async () => {
    const set = await api<{ data: { profile: { pictureUrl?: string } } }>('PUT', '/profile/photo', {
      base64: png.toString('base64'),
    });
    expect(set.status, JSON.stringify(set.body)).to.equal(200);
    let sim = await simProfile();
    expect(sim.picture, 'the simulator received a photo').to.not.equal(null);
    const jpeg = Buffer.from(sim.picture!.base64, 'base64');
    expect(jpeg.subarray(0, 3).toString('hex'), 'a JPEG, as WhatsApp shows photos').to.equal('ffd8ff');
    expect((await sharp(jpeg).metadata()).width).to.equal(640);
    expect(set.body.data.profile.pictureUrl).to.equal(sim.pictureUrl);
    await waitFor(async () => (await api<Json>('GET', '/status')).body.profilePic === sim.pictureUrl, {
      timeoutMs: 10_000,
      what: 'the photo on GET /status',
    });

    const byUrl = await api<{ data: { profile: { pictureUrl?: string } } }>('PUT', '/profile/photo', {
      url: `${photoUrl}/photo.png`,
    });
    expect(byUrl.status, JSON.stringify(byUrl.body)).to.equal(200);
    sim = await simProfile();
    expect(byUrl.body.data.profile.pictureUrl).to.equal(sim.pictureUrl);

    const notImage = await api<{ details: { path: string[]; message: string }[] }>('PUT', '/profile/photo', {
      base64: Buffer.from('%PDF-1.4 not a photo').toString('base64'),
    });
    expect(notImage.status).to.equal(400);
    expect(notImage.body.details).to.deep.equal([
      { path: ['base64'], message: ACCOUNT_ERRORS.photoNotImage },
    ]);
    const missing = await api<{ error: string }>('PUT', '/profile/photo', { url: `${photoUrl}/nothing.png` });
    expect(missing.status).to.equal(422);
    expect(missing.body.error).to.equal(ACCOUNT_ERRORS.photoUnreachable);
    const both = await api('PUT', '/profile/photo', { url: `${photoUrl}/photo.png`, base64: 'AAAA' });
    expect(both.status).to.equal(400);

    const removed = await api<{ data: { profile: Json } }>('DELETE', '/profile/photo');
    expect(removed.status).to.equal(200);
    expect(removed.body.data.profile.pictureUrl).to.equal(undefined);
    expect((await simProfile()).picture).to.equal(null);
    await waitFor(async () => (await api<Json>('GET', '/status')).body.profilePic === undefined, {
      timeoutMs: 10_000,
      what: 'no photo on GET /status',
    });
  });

  it("When a contact's profile is read, then its about and (for a business) its business profile come back", async () => {
    await stack().simApi('POST', `/contacts/${friend}/profile`, { about: 'At the gym' });
    await stack().simApi('POST', `/contacts/${shop}/profile`, {
      about: 'Open 9-5',
      business: { description: 'Bikes and repairs', category: 'Bicycle shop', email: 'hi@shop.test' },
    });
    const person = await api<{ data: { profile: Json } }>('GET', `/contacts/${friend}/profile`);
    expect(person.status, JSON.stringify(person.body)).to.equal(200);
    expect(person.body.data.profile).to.deep.include({ about: 'At the gym' });
    expect((person.body.data.profile.contact as Json).phone).to.equal(friend);
    expect(person.body.data.profile.business).to.equal(undefined);
    const business = await api<{ data: { profile: Json } }>('GET', `/contacts/${shop}/profile`);
    expect(business.body.data.profile.business).to.deep.equal({
      description: 'Bikes and repairs',
      category: 'Bicycle shop',
      email: 'hi@shop.test',
    });
    await stack().simApi('POST', '/contacts', { phone: '15552400099', onWhatsApp: false });
    const nobody = await api<{ error: string }>('GET', '/contacts/15552400099/profile');
    expect(nobody.status).to.equal(404);
    expect(nobody.body.error).to.equal(ACCOUNT_ERRORS.contactNotFound);
    expect((await api('GET', '/contacts/12ab/profile')).status).to.equal(400);
  });

  it('When the account goes available and subscribes to a contact, then its presence and typing arrive as presence.update', async () => {
    const online = await api<{ data: Json }>('PUT', '/presence', { presence: 'available' });
    expect(online.status, JSON.stringify(online.body)).to.equal(200);
    await waitFor(async () => (await simProfile()).online, { timeoutMs: 10_000, what: 'the account online' });
    expect((await api('PUT', '/presence', { presence: 'away' })).status).to.equal(400);

    const sub = await api<{ data: Json }>('POST', `/contacts/${friend}/presence`);
    expect(sub.status, JSON.stringify(sub.body)).to.equal(200);
    expect(sub.body.data).to.deep.include({ subscribed: true });
    const drive = (body: Json) =>
      stack().simApi<{ delivered: number }>('POST', `/contacts/${friend}/presence`, body);
    expect((await drive({ presence: 'available' })).delivered).to.equal(1);
    expect((await drive({ presence: 'composing', to: account })).delivered).to.equal(1);
    expect((await drive({ presence: 'recording', to: account })).delivered).to.equal(1);
    expect((await drive({ presence: 'unavailable' })).delivered).to.equal(1);
    let seen: Json[] = [];
    await waitFor(async () => (seen = await events('presence.update')).length >= 5, {
      timeoutMs: 10_000,
      what: 'presence.update events',
    });
    const mine = seen.filter((e) => (e.contact as Json).phone === friend).map((e) => e.presence);
    // The subscription's first answer (offline, never seen), then the four driven above.
    expect(mine).to.deep.equal(['offline', 'online', 'typing', 'recording', 'offline']);
    const last = seen.at(-1)!;
    expect(last.lastSeen, 'last seen, shared by the contact').to.be.a('string');
    expect(Date.parse(last.lastSeen as string)).to.be.closeTo(Date.now(), 60_000);

    await drive({ presence: 'available' });
    await drive({ presence: 'unavailable', shareLastSeen: false });
    await waitFor(async () => (seen = await events('presence.update')).length >= 7, {
      timeoutMs: 10_000,
      what: 'the hidden last seen',
    });
    expect(seen.at(-1)).to.deep.include({ presence: 'offline' });
    expect(seen.at(-1)!.lastSeen, 'hidden by the contact').to.equal(undefined);

    // Typing in a group the account shares with the contact: the event names the group.
    const group = '120363024400000001@g.us';
    expect((await drive({ presence: 'composing', to: account, groupId: group })).delivered).to.equal(1);
    await waitFor(async () => (seen = await events('presence.update')).length >= 8, {
      timeoutMs: 10_000,
      what: 'the chat state in a group',
    });
    expect(seen.at(-1)).to.deep.include({ presence: 'typing', chat: { type: 'group', id: group } });
    expect((seen.at(-1)!.contact as Json).phone).to.equal(friend);
  });

  it('When a number is blocked, then GET /blocklist lists it and a send to it is refused; unblocked, it goes', async () => {
    const blocked = await api<{ data: { blocked: boolean; contact: Json } }>('POST', '/blocklist', {
      phone: spammer,
    });
    expect(blocked.status, JSON.stringify(blocked.body)).to.equal(200);
    expect(blocked.body.data.blocked).to.equal(true);
    const lid = blocked.body.data.contact.lid as string;
    expect(lid).to.match(/^\d+@lid$/);
    expect((await simProfile()).blocked).to.deep.equal([{ lid, phone: spammer }]);
    const list = await api<{ data: { total: number; contacts: Json[] } }>('GET', '/blocklist');
    expect(list.body.data).to.deep.equal({ total: 1, contacts: [{ phone: spammer, lid }] });

    const refused = await api<{ error: string; details: { path: string[]; message: string }[] }>(
      'POST',
      '/send',
      {
        to: spammer,
        text: 'hello?',
      },
    );
    expect(refused.status).to.equal(422);
    expect(refused.body.error).to.equal(ACCOUNT_ERRORS.recipientBlocked);
    expect(refused.body.details).to.deep.equal([
      { path: ['to'], message: `${spammer} is on this account's blocklist` },
    ]);
    const byLid = await api('POST', '/send', { to: lid, text: 'hello?' });
    expect(byLid.status, 'the same contact by its LID').to.equal(422);
    const otp = await api('POST', '/otp', { phone: spammer, code: '123456', language: 'English' });
    expect(otp.status).to.equal(422);

    // A list: each blocked recipient fails on its own, the others go (as opt-outs do).
    const sent = await api<{ messageIds: string[] }>('POST', '/send', {
      to: [friend, spammer],
      text: 'news',
    });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(202);
    const [toFriend, toSpammer] = sent.body.messageIds;
    await waitFor(
      async () => {
        const a = (await api<{ data: Json }>('GET', `/messages/${toFriend}`)).body.data;
        const b = (await api<{ data: Json }>('GET', `/messages/${toSpammer}`)).body.data;
        return a.status !== 'queued' && b.status === 'failed'
          ? (expect(b.error).to.equal('recipient_blocked'), true)
          : false;
      },
      { timeoutMs: 30_000, what: 'the list settled' },
    );
    expect((await stack().inbox(spammer)).length, 'nothing reached the blocked number').to.equal(0);
    // Nor does what the blocked number writes reach the account (WhatsApp drops it).
    const written = await fetch(`${stack().simulator.controlUrl}/contacts/${spammer}/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ to: account, text: 'let me in' }),
    });
    expect(written.status).to.equal(409);

    const unblocked = await api<{ data: { blocked: boolean } }>('DELETE', `/blocklist/${spammer}`);
    expect(unblocked.status, JSON.stringify(unblocked.body)).to.equal(200);
    expect(unblocked.body.data.blocked).to.equal(false);
    expect((await api<{ data: { total: number } }>('GET', '/blocklist')).body.data.total).to.equal(0);
    expect((await simProfile()).blocked).to.deep.equal([]);
    expect((await api('POST', '/send', { to: spammer, text: 'sorry' })).status).to.equal(202);
  });

  it('When the phone blocks a number, then the push reaches the gateway and sends to it are refused', async () => {
    // The device meets the contact (its profile read): its phone <-> LID pair is known.
    expect((await api('GET', `/contacts/${other}/profile`)).status).to.equal(200);
    await stack().simApi('POST', `/accounts/${account}/blocklist`, { contact: other, action: 'block' });
    await waitFor(
      async () => (await api<{ data: { total: number } }>('GET', '/blocklist')).body.data.total === 1,
      { timeoutMs: 10_000, what: 'the pushed block' },
    );
    // WhatsApp named it by LID; the device's map knows its number, so a send by number is refused.
    expect((await api('POST', '/send', { to: other, text: 'hi' })).status).to.equal(422);
    const byLid = (await simProfile()).blocked[0]!.lid;
    expect((await api('POST', '/send', { to: byLid, text: 'hi' })).status).to.equal(422);

    // A reconnect replaces the list from WhatsApp's answer (the phone unblocked meanwhile).
    await stack().simApi('POST', `/accounts/${account}/blocklist`, { contact: other, action: 'unblock' });
    await stack().simApi('POST', '/faults/drop', { phone: account });
    await stack().waitForStatus('connected');
    await waitFor(
      async () => (await api<{ data: { total: number } }>('GET', '/blocklist')).body.data.total === 0,
      { timeoutMs: 15_000, what: 'the list read again at connect' },
    );
  });

  it('When a token of another device asks, then it sees only its own device (not connected: 409)', async () => {
    const otherToken = await stack().createToken('another-device');
    const res = await stack().api('GET', '/profile', undefined, otherToken);
    expect(res.status).to.equal(409);
    const list = await stack().api('GET', '/blocklist', undefined, otherToken);
    expect(list.status).to.equal(409);
  });
});

/**
 * The account's 2026 protocol changes Baileys rc14 lacks (docs/whatsapp-2026.md), through the real
 * client against the simulator taught them:
 * - the "about" is a text status set by a GraphQL mutation (whatsmeow 662b0121): the legacy iq
 *   Baileys sends is answered but changes nothing (libs/messenger text-status.ts);
 * - the blocklist goes by LID, with the phone beside it only when the client knows it (whatsmeow
 *   8d023aa9): Baileys refuses a LID whose number it does not know, so a contact that hides its
 *   number could not be blocked (libs/messenger account.ts blocks it by its LID alone).
 */
describe('e2e: the account in 2026 — the about as a text status, blocking a hidden number by its LID (real client, simulator)', function () {
  this.timeout(150_000);
  const stack = useStack({ allInOne: true, env: { RATE_LIMIT_ACCOUNT: '1000' } });
  const account = '15550690001';
  const hidden = '15550690002';

  const api = async <T = Json>(method: string, path: string, body?: unknown) => {
    const res = await stack().api<T>(method, path, body);
    const problem = openApiProblem(
      `${stack().apiUrl}/api/messenger/v1${path}`,
      method,
      res.status,
      res.body,
      res.headers,
    );
    expect(problem, `${method} ${path}: ${problem}`).to.equal(undefined);
    return res;
  };
  const simBlocked = async () =>
    (await stack().simApi<{ blocked: { lid: string }[] }>('GET', `/accounts/${account}/profile`)).blocked.map(
      (b) => b.lid,
    );
  const writes = (text: string) =>
    fetch(`${stack().simulator.controlUrl}/contacts/${hidden}/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ to: account, text }),
    });

  before(async () => {
    await stack().linkByQr(account);
  });

  it('When the about is set, then WhatsApp keeps it (the text status mutation) and GET /profile reads it back from WhatsApp; set empty, it is cleared', async () => {
    const profile = () => stack().simApi<{ about: string | null }>('GET', `/accounts/${account}/profile`);
    const set = await api<{ data: { profile: Json } }>('PATCH', '/profile', {
      about: 'Open 9 to 5, Mon-Fri',
    });
    expect(set.status, JSON.stringify(set.body)).to.equal(200);
    expect(set.body.data.profile).to.deep.include({ about: 'Open 9 to 5, Mon-Fri' });
    expect((await profile()).about).to.equal('Open 9 to 5, Mon-Fri');
    const cleared = await api<{ data: { profile: Json } }>('PATCH', '/profile', { about: '' });
    expect(cleared.status, JSON.stringify(cleared.body)).to.equal(200);
    expect(cleared.body.data.profile).to.not.have.property('about');
    expect((await profile()).about).to.equal(null);
  });

  it('When a contact known only by its LID is blocked, then WhatsApp takes the block (no phone beside it), GET /blocklist lists the LID, sends to it are refused and it can write no more; unblocked, it writes again', async () => {
    const contact = await stack().simApi<{ lid: string }>('POST', '/contacts', {
      phone: hidden,
      hidePhone: true,
    });
    const lid = `${contact.lid}@lid`;
    expect((await writes('hello from nowhere')).status).to.equal(200);
    await waitFor(
      async () =>
        (await stack().redis.hget(keys.contactIdentities(stack().deviceId), `l:${contact.lid}`)) === '',
      { what: 'the LID met, with no number' },
    );

    const blocked = await api<{ data: { blocked: boolean; contact: Json } }>('POST', '/blocklist', {
      phone: lid,
    });
    expect(blocked.status, JSON.stringify(blocked.body)).to.equal(200);
    expect(blocked.body.data).to.deep.equal({ blocked: true, contact: { lid } });
    expect(await simBlocked()).to.deep.equal([lid]);
    const list = await api<{ data: { total: number; contacts: Json[] } }>('GET', '/blocklist');
    expect(list.body.data).to.deep.equal({ total: 1, contacts: [{ lid }] });
    const refused = await api<{ error: string }>('POST', '/send', { to: lid, text: 'hello?' });
    expect(refused.status).to.equal(422);
    expect(refused.body.error).to.equal(ACCOUNT_ERRORS.recipientBlocked);
    expect((await writes('let me in')).status, 'WhatsApp drops what a blocked contact writes').to.equal(409);

    const unblocked = await api<{ data: { blocked: boolean } }>('DELETE', `/blocklist/${lid}`);
    expect(unblocked.status, JSON.stringify(unblocked.body)).to.equal(200);
    expect(await simBlocked()).to.deep.equal([]);
    expect((await writes('thanks')).status).to.equal(200);
  });
});
