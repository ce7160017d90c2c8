import { expect } from 'chai';
import { createMetrics, type ContactIdentity, type DeviceCommandReply, type Metrics } from '@mgw/contracts';
import { HOLDER_WAIT_SECONDS, MemoryHolder, said } from '../test-support.js';
import { MemoryLookupCap } from './memory-contacts.js';
import { lookUpUsernames, resolveUsername, type ResolveUsernameDeps } from './resolve-username.js';

describe('Usernames: resolveUsername and lookUpUsernames ask the holder, counted against the lookup cap (an in-memory holder)', () => {
  let mh: MemoryHolder;
  let metrics: Metrics;
  /** The device's phone <-> LID map, as the holder keeps it. */
  let known: Map<string, ContactIdentity>;
  let deps: ResolveUsernameDeps;
  const deviceId = 'un-1';
  const lid = '998877665544@lid';

  beforeEach(() => {
    mh = new MemoryHolder();
    metrics = createMetrics();
    known = new Map();
    deps = {
      holder: mh.holder,
      sessions: mh.sessions,
      cap: new MemoryLookupCap(3, 900),
      lookups: metrics.contactLookups,
      identities: { resolve: async (_d, address) => known.get(address) ?? { lid: address } },
    };
  });
  const counted = async () =>
    Object.fromEntries((await metrics.contactLookups.get()).values.map((v) => [v.labels.outcome, v.value]));
  const answering =
    (...usernames: object[]) =>
    () =>
      ({ ok: true, data: { usernames } }) as DeviceCommandReply;

  it('When a username is found, then the contact is its LID, the phone WhatsApp or the map knows, and the username; the PIN went in the command only', async () => {
    known.set(lid, { lid, phone: '15551234567' });
    const heard = mh.device(deviceId, answering({ username: 'alice.shop', status: 'found', lid }));

    expect(await resolveUsername(deps, deviceId, { username: 'alice.shop', pin: '1234' })).to.deep.equal({
      ok: true,
      data: {
        username: 'alice.shop',
        status: 'found',
        contact: { lid, phone: '15551234567', username: 'alice.shop' },
      },
    });
    expect(heard.map(said)).to.deep.equal([
      { type: 'account-usernames-resolve', deviceId, lookups: [{ username: 'alice.shop', pin: '1234' }] },
    ]);
    expect(mh.asked[0]!.waitSeconds).to.equal(HOLDER_WAIT_SECONDS);
    expect(await counted()).to.deep.equal({ looked_up: 1 });
  });

  it("When WhatsApp names the phone, then it wins over the map's", async () => {
    known.set(lid, { lid, phone: '15550000000' });
    mh.device(deviceId, answering({ username: 'bob', status: 'found', lid, phone: '15551111111' }));
    const resolved = await resolveUsername(deps, deviceId, { username: 'bob' });
    expect(resolved.ok && resolved.data.contact).to.deep.equal({
      lid,
      phone: '15551111111',
      username: 'bob',
    });
  });

  it('When the username is guarded by a PIN or nobody has it, then only the username and what WhatsApp said', async () => {
    const answers = [
      answering({ username: 'carol', status: 'pin_required' }),
      answering({ username: 'dave', status: 'not_found' }),
      answering(),
    ];
    mh.device(deviceId, () => answers.shift()!());
    expect(await resolveUsername(deps, deviceId, { username: 'carol' })).to.deep.equal({
      ok: true,
      data: { username: 'carol', status: 'pin_required' },
    });
    expect(await resolveUsername(deps, deviceId, { username: 'dave' })).to.deep.equal({
      ok: true,
      data: { username: 'dave', status: 'not_found' },
    });
    expect(await resolveUsername(deps, deviceId, { username: 'erin' }), 'no answer for it').to.deep.equal({
      ok: false,
      reason: 'failed',
    });
  });

  it('When the device is not connected, then no_device before anything is counted or asked', async () => {
    const heard = mh.fakeSender(deviceId, answering());
    mh.sessions.update(deviceId, 'connecting');
    expect(await resolveUsername(deps, deviceId, { username: 'alice' })).to.deep.equal({
      ok: false,
      reason: 'no_device',
    });
    expect(heard).to.deep.equal([]);
    expect(await counted()).to.deep.equal({});
  });

  it('When the lookups would pass the daily cap, then capped (all or none), nothing asked; the holder’s failures come back as they are', async () => {
    const answers: (DeviceCommandReply | undefined)[] = [{ ok: false, error: 'rate-overlimit' }, undefined];
    const heard = mh.device(deviceId, () => answers.shift());
    const four = ['a1', 'a2', 'a3', 'a4'].map((username) => ({ username }));

    expect(await lookUpUsernames(deps, deviceId, four)).to.deep.equal({
      ok: false,
      reason: 'capped',
      resetInSeconds: 900,
    });
    expect(heard).to.deep.equal([]);
    expect(await lookUpUsernames(deps, deviceId, four.slice(0, 1))).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'rate-overlimit',
    });
    expect(await resolveUsername(deps, deviceId, { username: 'a2' })).to.deep.equal({
      ok: false,
      reason: 'timeout',
    });
    expect(await counted()).to.deep.equal({ capped: 4, looked_up: 2 });
  });

  it('When several usernames are looked up at once, then one command names them all and the wait grows by each one’s budget', async () => {
    const usernames = [
      { username: 'x1', status: 'found', lid },
      { username: 'x2', status: 'not_found' },
    ];
    mh.device(deviceId, answering(...usernames));
    expect(await lookUpUsernames(deps, deviceId, [{ username: 'x1' }, { username: 'x2' }])).to.deep.equal({
      ok: true,
      data: usernames,
    });
    expect(mh.asked[0]!.waitSeconds).to.equal(HOLDER_WAIT_SECONDS + 20);
  });
});
