import { expect } from 'chai';
import {
  WAMessageStatus,
  type NewChatMessageCapInfo,
  type ReachoutTimelockState,
  type WAMessageUpdate,
} from '@whiskeysockets/baileys';
import type { InboxMessage, SimulatorHandle } from '../../src/index.js';
import { sleep, until, type TestDevice, linkTestDevice, startTestSimulator, simControl } from '@mgw/testing';

const ACCOUNT = '15550005001';
const FRIEND = '15550005002';
const jid = (phone: string) => `${phone}@s.whatsapp.net`;
const RESTRICTED = ['463', 'Your account has been restricted'];

describe('messenger-sim: reach-out lock and new-chat cap, as Baileys sees them', function () {
  this.timeout(30_000);
  let sim: SimulatorHandle;
  let device: TestDevice;
  const updates: WAMessageUpdate[] = [];
  const capUpdates: NewChatMessageCapInfo[] = [];

  const send = async (phone: string, text: string): Promise<string> =>
    (await device.sock!.sendMessage(jid(phone), { text }))!.key.id!;
  const failure = (id: string) =>
    until(
      () => updates.find((u) => u.key.id === id && u.update.status === WAMessageStatus.ERROR),
      5_000,
      `an error update for ${id}`,
    );
  const arrival = (phone: string, id: string): Promise<InboxMessage> =>
    until(() => sim.inbox(phone).find((m) => m.id === id), 10_000, `message ${id} in ${phone}'s inbox`);
  const lockUpdate = (isActive: boolean): Promise<ReachoutTimelockState> =>
    device
      .waitForUpdate((u) => u.reachoutTimeLock?.isActive === isActive, 10_000)
      .then((u) => u.reachoutTimeLock!);
  const call = (method: string, path: string, body?: unknown) => simControl(sim)(method, path, body);

  before(async () => {
    sim = await startTestSimulator();
    const friend = sim.upsertContact({ phone: FRIEND, name: 'Friend' });
    device = await linkTestDevice(sim, ACCOUNT);
    device.sock!.ev.on('messages.update', (u) => updates.push(...u));
    device.sock!.ev.on('message-capping.update', (info) => capUpdates.push(info));
    // the friend writes first: its phone issues the account a trusted-contact token
    await sim.sendInbound(FRIEND, ACCOUNT, 'write me back any time');
    const tokenJid = `${friend.lid}@lid`;
    for (let tries = 0; !(await device.auth.keys.get('tctoken', [tokenJid]))[tokenJid]; tries++) {
      if (tries > 500) throw new Error('the device never stored the tctoken');
      await sleep(20);
    }
  });

  afterEach(() => sim.clearFaults());

  after(async () => {
    await device?.end();
    await sim.close();
  });

  it('When the account is restricted, then a stranger gets nothing and the send fails with 463, while a contact who wrote still receives', async () => {
    const pushed = lockUpdate(true);
    const view = sim.restrict({ phone: ACCOUNT, durationMs: 5_000 });
    const lock = await pushed;

    const cold = await send('15550005010', 'cold reach-out');
    const warm = await send(FRIEND, 'reply to a friend');
    const failed = await failure(cold);
    const got = await arrival(FRIEND, warm);

    expect(lock).to.deep.equal({
      isActive: true,
      timeEnforcementEnds: new Date(Math.ceil(Date.parse(view.restrictedUntil!) / 1000) * 1000),
      enforcementType: 'DEFAULT',
    });
    expect(failed.update.messageStubParameters).to.deep.equal(RESTRICTED);
    expect(sim.inbox('15550005010')).to.deep.equal([]);
    expect(got.text).to.equal('reply to a friend');
    expect(
      updates.filter((u) => u.key.id === warm && u.update.status === WAMessageStatus.ERROR),
    ).to.deep.equal([]);
  });

  it('When the client fetches its lock, then it gets end and type; when faults are cleared, then it hears the lift', async () => {
    const ends = Date.now() + 60_000;
    const set = await call('POST', '/faults/restrict', {
      phone: ACCOUNT,
      until: new Date(ends).toISOString(),
      reason: 'BIZ_QUALITY',
    });

    const fetched = await device.sock!.fetchAccountReachoutTimelock();
    const lifted = lockUpdate(false);
    const cleared = await call('DELETE', '/faults');
    const liftedState = await lifted;
    const after = await device.sock!.fetchAccountReachoutTimelock();
    const counters = await call('GET', `/accounts/${ACCOUNT}/restrictions`);

    expect(set.body).to.include({
      phone: ACCOUNT,
      restrictedUntil: new Date(ends).toISOString(),
      enforcementType: 'BIZ_QUALITY',
    });
    expect(fetched).to.deep.equal({
      isActive: true,
      timeEnforcementEnds: new Date(Math.ceil(ends / 1000) * 1000),
      enforcementType: 'BIZ_QUALITY',
    });
    expect(cleared.status).to.equal(200);
    expect(liftedState).to.deep.equal({ isActive: false, enforcementType: 'DEFAULT' });
    expect(after).to.deep.equal({
      isActive: false,
      timeEnforcementEnds: undefined,
      enforcementType: 'DEFAULT',
    });
    expect(counters.body).to.not.have.property('restrictedUntil');
  });

  it('When the lock runs out, then the client hears it lifted and the stranger it failed on now receives', async () => {
    const stranger = '15550005011';
    const started = Date.now();
    const lifted = lockUpdate(false);
    sim.restrict({ phone: ACCOUNT, durationMs: 1_200 });
    const refused = await send(stranger, 'too early');
    await failure(refused);

    await lifted;
    const liftedAfter = Date.now() - started;
    const retried = await send(stranger, 'now it may pass');
    const got = await arrival(stranger, retried);

    expect(liftedAfter).to.be.at.least(1_200);
    expect(got.text).to.equal('now it may pass');
    expect(sim.inbox(stranger).map((m) => m.id)).to.deep.equal([retried]);
  });

  it('When the account may start two new chats a day, then the third first message fails with 463 and existing chats go on', async () => {
    const used = sim.restrictions(ACCOUNT).newChatsToday;
    const cap = used + 2;

    const set = await call('POST', '/faults/new-chat-cap', { phone: ACCOUNT, newChatCap: cap });
    const first = await send('15550005020', 'first new chat');
    const second = await send('15550005021', 'second new chat');
    await Promise.all([arrival('15550005020', first), arrival('15550005021', second)]);
    const third = await send('15550005022', 'one too many');
    const failed = await failure(third);
    const again = await send('15550005020', 'same chat, later');
    const friend = await send(FRIEND, 'a friend is no new chat');
    await Promise.all([arrival('15550005020', again), arrival(FRIEND, friend)]);
    const pushed = await until(
      () => capUpdates.find((c) => c.capping_status === 'CAPPED'),
      5_000,
      'a CAPPED push',
    );
    const fetched = await device.sock!.fetchNewChatMessageCap();

    expect(set.body).to.include({ newChatCap: cap, newChatsToday: used });
    expect(failed.update.messageStubParameters).to.deep.equal(RESTRICTED);
    expect(sim.inbox('15550005022')).to.deep.equal([]);
    expect(capUpdates.map((c) => c.used_quota)).to.deep.equal([used, used + 1, used + 2]);
    expect(pushed).to.include({ total_quota: cap, used_quota: cap });
    expect(fetched).to.include({ total_quota: cap, used_quota: cap, capping_status: 'CAPPED' });
    expect(Number(fetched.cycle_end_timestamp) - Number(fetched.cycle_start_timestamp)).to.equal(86_400);
    expect(sim.restrictions(ACCOUNT)).to.deep.equal({ phone: ACCOUNT, newChatsToday: cap, newChatCap: cap });
  });

  it('When a restriction or cap is asked for wrongly, then the API answers 400 or 404 and arms nothing', async () => {
    const statuses = await Promise.all([
      call('POST', '/faults/restrict', { phone: ACCOUNT }),
      call('POST', '/faults/restrict', { phone: ACCOUNT, until: '2001-01-01T00:00:00Z' }),
      call('POST', '/faults/restrict', { phone: ACCOUNT, until: Date.now() + 5_000, durationMs: 5_000 }),
      call('POST', '/faults/restrict', { phone: ACCOUNT, durationMs: 5_000, reason: 'not a type' }),
      call('POST', '/faults/restrict', { phone: '15550005099', durationMs: 5_000 }),
      call('POST', '/faults/new-chat-cap', { phone: ACCOUNT, newChatCap: -1 }),
      call('GET', '/accounts/15550005099/restrictions'),
    ]).then((answers) => answers.map((a) => a.status));

    expect(statuses).to.deep.equal([400, 400, 400, 400, 404, 400, 404]);
    expect(sim.restrictions(ACCOUNT)).to.not.have.any.keys('restrictedUntil', 'newChatCap');
  });

  it('When ack errors 429 and 463 are armed, then Baileys passes 429 on plainly and reports 463 as a restriction', async () => {
    sim.ackError({ phone: ACCOUNT, error: 429 });
    const limited = await send(FRIEND, 'rate limited');
    const limitedUpdate = await failure(limited);
    sim.ackError({ phone: ACCOUNT, error: 463 });
    const refused = await send(FRIEND, 'refused');
    const refusedUpdate = await failure(refused);
    const delivered = sim.inbox(FRIEND).map((m) => m.id);

    expect(limitedUpdate.update.messageStubParameters).to.deep.equal(['429']);
    expect(refusedUpdate.update.messageStubParameters).to.deep.equal(RESTRICTED);
    expect(delivered).to.not.include(limited);
    expect(delivered).to.not.include(refused);
  });
});
