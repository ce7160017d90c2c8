import { expect } from 'chai';
import { BULL_PREFIX, keys, sendQueueName } from '@mgw/contracts';
import { writeOverrides } from '@mgw/store';
import { deliverNctSalt, useStack, waitFor } from '@mgw/testing';

interface Sending {
  sentToday: number;
  firstContactsToday: number;
  dailyCap: number | null;
  firstContactCap: number | null;
  warmupDay?: number;
  restriction?: { reason: string; until: string; since: string };
  pausedUntil?: string;
}

const ADMIN_TOKEN = 'account-safety-admin-token-0123456789';

/** The cap window of this suite: short, so a held message's wait for the next one is seconds. */
const WINDOW_MS = 12_000;

describe('e2e: keeping the account safe — caps, first contacts, and pausing on WhatsApp push-back (real services, simulator)', function () {
  this.timeout(120_000);
  const stack = useStack({
    env: {
      SEND_CAP_WINDOW_MS: String(WINDOW_MS),
      SEND_OTP_RESERVE: '0.2',
      SEND_RESTRICTION_BACKOFF_MS: '4000',
      SEND_RATE_LIMIT_BACKOFF_MS: '3000',
      SEND_FAILURE_RUN: '3',
      SEND_FAILURE_BACKOFF_MS: '3000',
      ADMIN_API_TOKEN: ADMIN_TOKEN,
      // a webhook on a local address: its events stay in the outbox (no notifier runs here)
      ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
    },
  });
  const account = '15550700001';

  before(async () => {
    await stack().linkByQr(account);
    // With the account's NCT salt, first contacts carry a cstoken: a 463 is then about the account
    // (without it, one that WhatsApp says is not capping fails first_contact_token_missing instead).
    await deliverNctSalt(stack(), account);
    const hook = await stack().api('PUT', '/webhook', {
      url: 'http://127.0.0.1:9/hooks',
      events: ['session.status'],
    });
    expect(hook.status).to.equal(200);
  });

  /** The session.status events of the device's outbox (what its webhook would receive). */
  async function sessionEvents(): Promise<Record<string, unknown>[]> {
    const entries = (await stack().redis.xrange(keys.eventOutbox(stack().deviceId), '-', '+')) as [
      string,
      string[],
    ][];
    return entries.map(([, f]) => JSON.parse(f[f.indexOf('data') + 1]!) as Record<string, unknown>);
  }
  afterEach(async () => {
    await writeOverrides(stack().redis, stack().deviceId, { dailyCap: null, firstContactCap: null });
    await stack().simApi('DELETE', '/faults');
  });

  async function record(id: string): Promise<Record<string, string>> {
    return (await stack().api<{ data: Record<string, string> }>('GET', `/messages/${id}`)).body.data;
  }
  async function sending(): Promise<Sending> {
    const res = await stack().api<{ sending: Sending }>('GET', '/status');
    return res.body.sending;
  }
  async function send(to: string | string[]): Promise<string[]> {
    const res = await stack().api<{ messageId: string; messageIds?: string[] }>('POST', '/send', {
      to,
      text: 'hello',
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    return res.body.messageIds ?? [res.body.messageId];
  }
  async function statuses(ids: string[]): Promise<string[]> {
    return Promise.all(ids.map(async (id) => (await record(id)).status!));
  }
  const sentOrBeyond = (s: string) => s === 'sent' || s === 'delivered' || s === 'read';
  /** Each number got exactly one message, with the id its record names. */
  async function deliveredOnce(ids: string[], phones: string[]): Promise<void> {
    for (const [i, phone] of phones.entries()) {
      const inbox = await stack().inbox(phone);
      expect(inbox, phone).to.have.length(1);
      expect(inbox[0]!.id).to.equal((await record(ids[i]!)).platformMessageId);
      expect(inbox[0]!.duplicates ?? 0, `${phone} got a second copy`).to.equal(0);
    }
  }
  /** The message's job waits delayed in the queue and has used no attempt. */
  async function heldInQueue(id: string): Promise<void> {
    const key = `${BULL_PREFIX}:${sendQueueName(stack().deviceId)}:${id}`;
    const attempts = await stack().redis.hget(key, 'atm');
    expect(Number(attempts ?? 0), 'attempts used').to.equal(0);
    expect(
      await stack().redis.zscore(`${BULL_PREFIX}:${sendQueueName(stack().deviceId)}:delayed`, id),
    ).to.not.equal(null);
  }
  /**
   * Until each message's job waits delayed in the queue: the sender took it and put it back for
   * later (a cap, a pause). The event a "still queued" check needs, instead of a sleep that a
   * loaded machine could stretch past the pause it checks.
   */
  async function held(ids: string[]): Promise<void> {
    const delayed = `${BULL_PREFIX}:${sendQueueName(stack().deviceId)}:delayed`;
    await waitFor(
      async () =>
        (await Promise.all(ids.map((id) => stack().redis.zscore(delayed, id)))).every((s) => s !== null),
      { intervalMs: 50, what: `${ids.length} message(s) held in the queue` },
    );
  }
  /** Waits until the current cap window has at least `ms` left. */
  async function windowWithRoom(ms: number): Promise<void> {
    const left = WINDOW_MS - (Date.now() % WINDOW_MS);
    if (left < ms) await new Promise((r) => setTimeout(r, left + 50));
  }

  it('When the phone confirmed the link, then the warm-up started that day: with a ladder, today is day 1 and its step is the cap', async () => {
    const from = Number(await stack().redis.hget(keys.deviceSettings(stack().deviceId), 'warmupFrom'));
    // Linked in this suite's before(): quiet: 5000 ms.
    expect(Date.now() - from).to.be.within(0, 120_000);
    // The link may have been a window ago on a loaded machine (a "day" here is 12 s): start the
    // warm-up in a window with room left, as the link would have.
    await windowWithRoom(4000);
    await stack().redis.hset(keys.deviceSettings(stack().deviceId), 'warmupFrom', String(Date.now()));
    // This suite runs with the warm-up off; a device's own ladder turns it on.
    await writeOverrides(stack().redis, stack().deviceId, { warmupCaps: [3, 6] });
    expect(await sending()).to.include({ warmupDay: 1, dailyCap: 3 });
    await writeOverrides(stack().redis, stack().deviceId, { warmupCaps: null });
    expect((await sending()).warmupDay).to.equal(undefined);
  });

  it('When a list goes over the daily cap, then the rest waits queued (no attempt used) while an OTP still uses the reserve, and it is sent once the next window allows', async () => {
    // Cap 5 with 20 % kept for OTPs: 4 list messages per window, the fifth slot is the OTP's.
    await writeOverrides(stack().redis, stack().deviceId, { dailyCap: 5 });
    await windowWithRoom(9000);
    const phones = Array.from({ length: 6 }, (_, i) => `1555071000${i}`);
    const ids = await send(phones);
    await waitFor(async () => (await statuses(ids)).filter(sentOrBeyond).length === 4, { what: '4 sent' });
    const now = await statuses(ids);
    const queued = ids.filter((_, i) => now[i] === 'queued');
    expect(queued).to.have.length(2);
    await held(queued);
    for (const id of queued) await heldInQueue(id);

    const otp = await stack().api<{ success: boolean }>('POST', '/otp', {
      phone: '15550710099',
      code: '424242',
    });
    expect(otp.status, JSON.stringify(otp.body)).to.equal(200);
    const usage = await sending();
    expect(usage).to.include({ sentToday: 5, dailyCap: 5 });
    expect(await statuses(queued)).to.deep.equal(['queued', 'queued']);

    await waitFor(async () => (await statuses(ids)).every(sentOrBeyond), {
      timeoutMs: WINDOW_MS + 10_000,
      what: 'the held messages sent in the next window',
    });
    await deliveredOnce(ids, phones);
  });

  it('When a contact wrote to the account, then a message to them is no first contact, and first messages to strangers stop at their own cap', async () => {
    await writeOverrides(stack().redis, stack().deviceId, { firstContactCap: 1 });
    await windowWithRoom(8000);
    const friend = '15550720001';
    await stack().simApi('POST', `/contacts/${friend}/send`, { to: account, text: 'hi there' });
    // The device remembered who wrote (the set the first-contact cap reads), not a sleep.
    await waitFor(
      async () => (await stack().redis.sismember(keys.deviceChats(stack().deviceId), friend)) === 1,
      {
        intervalMs: 50,
        what: 'the friend remembered as a chat that wrote',
      },
    );
    const strangers = ['15550720002', '15550720003'];
    const ids = await send([friend, ...strangers]);
    await waitFor(async () => (await statuses(ids)).filter(sentOrBeyond).length === 2, { what: '2 sent' });
    const afterTwo = await statuses(ids);
    await held(ids.filter((_, i) => afterTwo[i] === 'queued'));
    const now = await statuses(ids);
    expect(sentOrBeyond(now[0]!), 'the friend is not a first contact').to.equal(true);
    expect(now.filter((s) => s === 'queued')).to.have.length(1);
    expect((await sending()).firstContactsToday).to.equal(1);
    await writeOverrides(stack().redis, stack().deviceId, { firstContactCap: null });
    await waitFor(async () => (await statuses(ids)).every(sentOrBeyond), {
      timeoutMs: WINDOW_MS + 10_000,
      what: 'the held first contact sent in the next window',
    });
    await deliveredOnce(ids, [friend, ...strangers]);
  });

  it('When WhatsApp acks a message with 463, then the device pauses (the message and the ones after it stay queued, /status says so) and resumes by itself, each sent once', async () => {
    const [a, b, c] = ['15550730001', '15550730002', '15550730003'];
    await stack().simApi('POST', '/faults/ack-error', { to: a, error: 463, count: 1 });
    const [idA] = await send(a);
    await waitFor(async () => (await sending()).restriction !== undefined, { what: 'restricted' });
    const paused = await sending();
    expect(paused.restriction!.reason).to.equal('account_restricted');
    expect(paused.pausedUntil).to.equal(paused.restriction!.until);
    const status = await stack().api<{ status: string }>('GET', '/status');
    expect(status.body.status).to.equal('connected');
    const [idB, idC] = await send([b, c]);
    await held([idB!, idC!]);
    expect(await statuses([idA!, idB!, idC!])).to.deep.equal(['queued', 'queued', 'queued']);
    expect(await stack().inbox(b)).to.deep.equal([]);
    await heldInQueue(idB!);

    await waitFor(async () => (await statuses([idA!, idB!, idC!])).every(sentOrBeyond), {
      timeoutMs: 20_000,
      what: 'sent after the pause',
    });
    await deliveredOnce([idA!, idB!, idC!], [a, b, c]);
    expect((await sending()).restriction).to.equal(undefined);
    // The webhook heard of both: restricted (with reason and until), then the end of it.
    const events = (await sessionEvents()).filter(
      (e) => e.status === 'restricted' || e.reason === 'restriction_ended',
    );
    expect(events[0]).to.deep.include({ status: 'restricted', reason: 'account_restricted' });
    expect(Date.parse(events[0]!.until as string)).to.be.greaterThan(0);
    await waitFor(async () => (await sessionEvents()).some((e) => e.reason === 'restriction_ended'), {
      what: 'session.status restriction_ended',
    });
    expect((await sessionEvents()).find((e) => e.reason === 'restriction_ended')).to.include({
      status: 'connected',
    });
  });

  it('When WhatsApp sets a reach-out time lock, then nothing is sent until it ends, and the held messages go when it is lifted', async () => {
    await stack().simApi('POST', '/faults/restrict', { phone: account, durationMs: 5000 });
    await waitFor(async () => (await sending()).restriction?.reason === 'reachout_timelock', {
      what: 'time-locked',
    });
    const phones = ['15550740001', '15550740002'];
    const ids = await send(phones);
    await held(ids);
    expect(await statuses(ids)).to.deep.equal(['queued', 'queued']);
    for (const p of phones) expect(await stack().inbox(p)).to.deep.equal([]);
    await waitFor(async () => (await statuses(ids)).every(sentOrBeyond), {
      timeoutMs: 20_000,
      what: 'sent after the lock',
    });
    await deliveredOnce(ids, phones);
    expect((await sending()).restriction).to.equal(undefined);
  });

  it('When WhatsApp acks 429 (rate-overlimit), then the device pauses for the rate-limit back-off and the message goes after it, once', async () => {
    const phone = '15550750001';
    await stack().simApi('POST', '/faults/ack-error', { to: phone, error: 429, count: 1 });
    const [id] = await send(phone);
    await waitFor(async () => (await sending()).restriction?.reason === 'rate_limited', {
      what: 'rate limited',
    });
    expect((await record(id!)).status).to.equal('queued');
    await waitFor(async () => sentOrBeyond((await record(id!)).status!), { timeoutMs: 15_000, what: 'sent' });
    await deliveredOnce([id!], [phone]);
  });

  it('When several sends in a row fail, then they fail as before and the device pauses for the failure back-off, then sends again', async () => {
    const failing = ['15550760001', '15550760002', '15550760003'];
    for (const p of failing)
      await stack().simApi('POST', '/faults/ack-error', { to: p, error: 479, count: 1 });
    const ids: string[] = [];
    for (const p of failing) {
      ids.push(...(await send(p)));
      await waitFor(async () => (await record(ids.at(-1)!)).status === 'failed', { what: `${p} failed` });
    }
    for (const id of ids) expect(await record(id)).to.include({ error: 'rejected_by_server' });
    expect((await sending()).restriction?.reason).to.equal('repeated_failures');
    const [next] = await send('15550760004');
    await held([next!]);
    expect((await record(next!)).status).to.equal('queued');
    await waitFor(async () => sentOrBeyond((await record(next!)).status!), {
      timeoutMs: 15_000,
      what: 'sent',
    });
  });

  it('When WhatsApp refuses a new chat over its new-chat cap, then the device pauses until the cap cycle ends, and an operator can end the pause', async () => {
    await stack().simApi('POST', '/faults/new-chat-cap', { phone: account, newChatCap: 0 });
    const phone = '15550770001';
    const [id] = await send(phone);
    await waitFor(async () => (await sending()).restriction !== undefined, { what: 'paused' });
    const { restriction } = await sending();
    expect(restriction!.reason).to.equal('account_restricted');
    // The simulator's cycle is a rolling day: the pause lasts until it ends, not the short back-off.
    expect(Date.parse(restriction!.until) - Date.now()).to.be.above(23 * 3600_000);
    expect((await record(id!)).status).to.equal('queued');

    await stack().simApi('POST', '/faults/new-chat-cap', { phone: account, newChatCap: null });
    const admin = await fetch(`${stack().apiUrl}/api/admin/v1/devices/${stack().deviceId}/restriction`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(admin.status).to.equal(200);
    await waitFor(async () => sentOrBeyond((await record(id!)).status!), { timeoutMs: 15_000, what: 'sent' });
    await deliveredOnce([id!], [phone]);
  });
});
