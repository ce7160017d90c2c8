import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { storageContext } from '@mgw/store';
import { deviceKeys, familyOf, fastLinkMany, useStack, waitFor, waitIdle, type Stack } from '../src/index.js';

/** A linked account of the suite: its phone, name and the token acting on its device. */
interface Account {
  how: 'qr' | 'fast';
  phone: string;
  name: string;
  token: string;
  deviceId: string;
}

/**
 * The families of a device's keys (redis-footprint.ts), without the pairing record: a QR link
 * leaves it for 15 s after the link (for connects still waiting on the pairing), a fast link has
 * no pairing to record.
 */
async function families(s: Stack, deviceId: string): Promise<string[]> {
  const all = (await deviceKeys(s.redis, deviceId)).map((k) => familyOf(k, deviceId));
  return [...new Set(all)].filter((f) => f !== 'pairing').sort();
}

/** The stored credentials' fields (`me`'s and `account`'s too), each with its type, and the platform. */
async function credsShape(s: Stack, deviceId: string): Promise<Record<string, unknown>> {
  const key = keys.authCreds(deviceId);
  const creds = JSON.parse(s.encryption.openText((await s.redis.get(key))!, storageContext(key))) as Record<
    string,
    Record<string, unknown>
  >;
  const typed = (o: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(o).map(([k, v]) => [k, Array.isArray(v) ? 'array' : typeof v]));
  return { ...typed(creds), me: typed(creds.me!), account: typed(creds.account!), platform: creds.platform };
}

describe('testing: fast link — an account linked without a QR behaves as one linked by QR', function () {
  this.timeout(300_000);
  const stack = useStack();
  const contact = '15550420099';
  const accounts: Account[] = [];
  const qr = () => accounts[0]!;
  const fast = () => accounts.slice(1);

  const sendAndArrive = async (a: Account, text: string) => {
    const res = await stack().api('POST', '/send', { to: contact, text }, a.token);
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    await waitFor(async () => (await stack().inbox(contact)).some((m) => m.text === text), {
      timeoutMs: 30_000,
      what: `${a.how} ${a.phone}: "${text}" arrives`,
    });
    const got = (await stack().inbox(contact)).find((m) => m.text === text)!;
    expect(got.from, text).to.equal(a.phone);
  };

  const linkedDevicesMetric = async (): Promise<number> => {
    const sender = stack().senders()[0]!;
    const text = await (await fetch(`http://127.0.0.1:${sender.port}/metrics`)).text();
    return Number(/^mgw_devices_linked (\d+)/m.exec(text)?.[1] ?? NaN);
  };

  before(async () => {
    const s = stack();
    accounts.push({
      how: 'qr',
      phone: '15550420001',
      name: 'QR Account',
      token: s.token,
      deviceId: s.deviceId,
    });
    await s.linkByQr(qr().phone, qr().name);
    for (let i = 1; i <= 3; i++) {
      const deviceId = `fast-${i}-${Math.random().toString(36).slice(2, 8)}`;
      const token = await s.createToken(deviceId);
      accounts.push({ how: 'fast', phone: `1555042001${i}`, name: `Fast Account ${i}`, token, deviceId });
    }
    // One through the Stack method (it waits for `connected`), two through the batch form.
    const [first, ...rest] = fast();
    const one = await s.fastLink(first!.phone, first!.name, first!.token);
    expect(one).to.include({ deviceId: first!.deviceId, phone: first!.phone, name: first!.name });
    const many = await fastLinkMany(
      s,
      rest.map((a) => ({ phone: a.phone, deviceId: a.deviceId, name: a.name })),
    );
    expect(many.map((l) => l.deviceId)).to.deep.equal(rest.map((a) => a.deviceId));
    for (const a of rest) await s.waitForStatus('connected', 30_000, a.token);
  });

  it('When accounts are fast-linked beside one linked by QR, then GET /status of each says connected with the same fields, its phone and its name', async () => {
    const statuses = await Promise.all(
      accounts.map(async (a) => (await stack().api('GET', '/status', undefined, a.token)).body),
    );
    for (const [i, a] of accounts.entries()) {
      expect(statuses[i], a.how).to.include({
        success: true,
        status: 'connected',
        phone: a.phone,
        name: a.name,
      });
      expect(Object.keys(statuses[i]!).sort(), a.phone).to.deep.equal(Object.keys(statuses[0]!).sort());
    }
    // The same session.status events in the event log: connecting (the link), then connected.
    const sessionEvents = await Promise.all(
      accounts.map(async (a) => {
        const res = await stack().api<{ data: { events: { data: { status?: string } }[] } }>(
          'GET',
          '/events?types=session.status',
          undefined,
          a.token,
        );
        return res.body.data.events.map((e) => e.data.status);
      }),
    );
    expect(sessionEvents[0]).to.deep.equal(['connecting', 'connected']);
    for (const events of sessionEvents.slice(1)) expect(events).to.deep.equal(sessionEvents[0]);
  });

  it('When the sender logged the fast-linked companions in, then each uploaded its pre-keys as after a QR link, and the roster and devices_linked count all four', async () => {
    for (const a of accounts) {
      await waitFor(async () => (stack().sim.devices(a.phone)[0]?.preKeys ?? 0) > 0, {
        what: `${a.how} ${a.phone}: pre-keys uploaded`,
      });
      const [device, ...others] = stack().sim.devices(a.phone);
      expect(others, a.phone).to.deep.equal([]);
      expect(device, a.phone).to.include({ id: 1, connected: true });
    }
    const preKeys = accounts.map((a) => stack().sim.devices(a.phone)[0]!.preKeys);
    expect(new Set(preKeys).size, `pre-keys per device: ${preKeys.join(', ')}`).to.equal(1);
    expect((await stack().redis.smembers(keys.linkedDevices())).sort()).to.deep.equal(
      accounts.map((a) => a.deviceId).sort(),
    );
    await waitFor(async () => (await linkedDevicesMetric()) === accounts.length, {
      what: 'devices_linked counts the four devices',
    });
    // A linked device is not fast-linked again: its lease is held (the sender) or it has credentials.
    const again = await fastLinkMany(stack(), [{ phone: '15550420098', deviceId: qr().deviceId }]).then(
      () => undefined,
      (err: Error) => err.message,
    );
    expect(again).to.match(/is held|already linked/);
    // Refused before the simulator was asked: it provisioned nothing.
    expect(stack().sim.simulator.directory.get('15550420098')).to.equal(undefined);
  });

  it('When the accounts are idle, then each fast-linked device has the same families of Redis keys as the QR-linked one', async () => {
    for (const a of accounts) await waitIdle(stack().redis, a.deviceId, 2_000);
    // A family may come or go for a moment on any device (a send queue's stall check, a warm-up
    // step): compare once the devices settled alike, and show the difference if they never do.
    const same = async () => {
      const qrFamilies = JSON.stringify(await families(stack(), qr().deviceId));
      for (const a of fast())
        if (JSON.stringify(await families(stack(), a.deviceId)) !== qrFamilies) return false;
      return true;
    };
    await waitFor(same, { timeoutMs: 30_000, intervalMs: 500, what: 'the same key families' }).catch(
      () => undefined,
    );
    const byQr = await families(stack(), qr().deviceId);
    expect(byQr).to.include.members(['auth:creds', 'auth:keys:pre-key', 'session']);
    for (const a of fast()) expect(await families(stack(), a.deviceId), a.phone).to.deep.equal(byQr);
    // The stored credentials (as the sender left them after its login) have the same shape.
    const shapes = await Promise.all(accounts.map((a) => credsShape(stack(), a.deviceId)));
    for (const shape of shapes.slice(1)) expect(shape).to.deep.equal(shapes[0]);
  });

  it('When each account sends a text and a contact writes to it, then the text arrives from its phone and the inbound message reaches the gateway, fast-linked as QR-linked', async () => {
    for (const a of accounts) {
      await sendAndArrive(a, `fast out ${a.phone}`);
      const text = `fast in ${a.phone}`;
      await stack().sim.sendInbound(contact, a.phone, text);
      await waitFor(
        async () => {
          const res = await stack().api<{ data: { events: { data: { text?: string; from?: string } }[] } }>(
            'GET',
            '/events?types=message.received',
            undefined,
            a.token,
          );
          return res.body.data.events.some((e) => e.data.text === text && e.data.from === contact);
        },
        { timeoutMs: 30_000, what: `${a.phone}: message.received of "${text}"` },
      );
    }
  });

  it('When the sender restarts and then the simulator drops the sockets, then every account is connected again and sends', async () => {
    const old = stack().senders()[0]!;
    old.child.kill('SIGTERM');
    await old.exited;
    await stack().startService('sender');
    for (const a of accounts) {
      await waitFor(async () => stack().sim.devices(a.phone)[0]?.connected === true, {
        timeoutMs: 30_000,
        what: `${a.phone} logs in again`,
      });
      await stack().waitForStatus('connected', 30_000, a.token);
      await sendAndArrive(a, `after restart ${a.phone}`);
    }
    for (const a of accounts)
      expect(await stack().simApi('POST', '/faults/drop', { phone: a.phone })).to.deep.equal({ dropped: 1 });
    for (const a of accounts) {
      await waitFor(async () => stack().sim.devices(a.phone)[0]?.connected === true, {
        timeoutMs: 30_000,
        what: `${a.phone} reconnects`,
      });
      await sendAndArrive(a, `after drop ${a.phone}`);
    }
  });

  it('When a fast-linked and the QR-linked account are disconnected, then both are logged out alike: no companion, no credentials, off the roster, the same keys left', async () => {
    const gone = [qr(), fast()[0]!];
    for (const a of gone) {
      const res = await stack().api('POST', '/disconnect', undefined, a.token);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.success).to.equal(true);
      expect((await stack().api('GET', '/status', undefined, a.token)).body.status).to.equal('disconnected');
      expect(stack().sim.devices(a.phone), a.phone).to.deep.equal([]);
    }
    // The send queue's job keys are named by message id (one family for them all), and its stall
    // check is a lock the worker holds for a moment now and then (timing, not the logout).
    const left = await Promise.all(
      gone.map(async (a) => {
        const named = (await families(stack(), a.deviceId)).map((f) =>
          f.replace(/^bull:send:[0-9a-f-]{36}$/, 'bull:send:<job>'),
        );
        // Sorted after the renaming: a job's id sorted where its random id fell.
        return [...new Set(named)].filter((f) => f !== 'bull:send:stalled-check').sort();
      }),
    );
    expect(left[0]!.filter((f) => f.startsWith('auth:'))).to.deep.equal([]);
    expect(left[1]).to.deep.equal(left[0]);
    const roster = await stack().redis.smembers(keys.linkedDevices());
    expect(roster.sort()).to.deep.equal(
      fast()
        .slice(1)
        .map((a) => a.deviceId)
        .sort(),
    );
    await waitFor(async () => (await linkedDevicesMetric()) === 2, { what: 'devices_linked counts two' });
  });
});
