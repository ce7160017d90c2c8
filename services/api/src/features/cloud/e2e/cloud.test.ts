import net, { type AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { startCloudSim, type CloudSimHandle } from '@mgw/cloud-sim';
import { CONNECTION_MESSAGES, ERRORS, keys } from '@mgw/contracts';
import { loadApiConfig } from '../../../config.js';
import {
  call,
  createPoolToken,
  createToken,
  freshDeviceId,
  startApi,
  type TestApi,
} from '../../../../test/helpers/api.js';
import { adminCall, startAdminApi } from '../../../../test/helpers/admin.js';

/**
 * A device's Cloud API configuration through the real API and Redis, with the Graph API played by
 * the Cloud API simulator (libs/cloud-sim) on loopback: PUT/GET/DELETE /cloud on both surfaces,
 * and /connect, /status and /disconnect of a cloud device.
 */

/** The simulator's numbers: each its own token and app secret. */
const numbers = () => {
  const tag = randomBytes(3).toString('hex');
  return Array.from({ length: 6 }, (_, i) => ({
    id: `${7000 + i}${parseInt(tag, 16)}`,
    wabaId: `${8000 + i}${parseInt(tag, 16)}`,
    displayPhoneNumber: `+1 555-020-000${i}`,
    verifiedName: `Shop ${i}`,
    accessToken: `EAAtoken${i}${tag}secretvalue`,
    appSecret: `appsecret${i}${tag}`,
  }));
};

/** The API's config with CLOUD_GRAPH_URL at `url` and loopback allowed, read as the service reads its environment. */
const cloudAt = (url: string) =>
  loadApiConfig({
    ...process.env,
    NODE_ENV: 'test',
    CLOUD_GRAPH_URL: url,
    ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
  }).cloud;

describe('API: a Cloud API device — configured, connected, its status, disconnected (Cloud API simulator)', () => {
  let t: TestApi;
  let sim: CloudSimHandle;
  const N = numbers();
  const body = (n: (typeof N)[number], verifyToken = `verify-${n.id}`) => ({
    phoneNumberId: n.id,
    wabaId: n.wabaId,
    accessToken: n.accessToken,
    appSecret: n.appSecret,
    verifyToken,
  });
  /** Every secret the simulator's numbers have: none may be in an answer, a log line or Redis in the clear. */
  const secrets = () => N.flatMap((n) => [n.accessToken, n.appSecret, `verify-${n.id}`]);
  const noSecretIn = (text: string, where: string) => {
    for (const s of secrets()) expect(text, `${where} holds a secret`).to.not.include(s);
  };

  before(async () => {
    sim = await startCloudSim({
      numbers: N.map((n, i) => ({ ...n, ...(i === 1 ? { qualityRating: 'YELLOW' } : {}) })),
    });
    t = await startAdminApi({ cloud: cloudAt(sim.url) });
  });
  after(async () => {
    await t.close();
    await sim.close();
  });

  it('When a device token configures its device, connects, reads its status and disconnects, then each answers as the contract does', async () => {
    const deviceId = freshDeviceId();
    const token = await createToken(t, { deviceId });
    const n = N[0]!;

    const put = await call(`${t.api}/cloud`, {
      method: 'PUT',
      token,
      json: { ...body(n), throughputPerSecond: 20 },
    });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect(put.body.data).to.deep.include({
      engine: 'cloud',
      phoneNumberId: n.id,
      wabaId: n.wabaId,
      throughputPerSecond: 20,
      graphVersion: 'v21.0',
      otpTemplate: 'verification_code',
      status: 'disconnected',
    });
    expect((put.body.data as { profile: unknown }).profile).to.deep.include({
      displayPhoneNumber: n.displayPhoneNumber,
      verifiedName: n.verifiedName,
      qualityRating: 'GREEN',
    });
    const got = await call(`${t.api}/cloud`, { token });
    expect(got.status).to.equal(200);
    expect(got.body).to.deep.equal(put.body);
    // Changes count as linking does (RATE_LIMIT_CONNECT), reads as /status (RATE_LIMIT_STATUS).
    expect(put.headers.get('x-ratelimit-limit')).to.equal(String(t.config.rateLimits.connect));
    expect(got.headers.get('x-ratelimit-limit')).to.equal(String(t.config.rateLimits.status));

    const before = await call(`${t.api}/status`, { token });
    expect(before.body).to.deep.include({ success: true, status: 'disconnected', engine: 'cloud' });
    expect(before.body).to.not.have.property('phone');

    const connected = await call(`${t.api}/connect`, { token });
    expect(connected.status, JSON.stringify(connected.body)).to.equal(200);
    expect(connected.body).to.deep.equal({ success: true, status: 'connected' });
    const again = await call(`${t.api}/connect`, { method: 'POST', token });
    expect(again.body).to.deep.equal({ success: true, status: 'connected' });
    expect(await t.redis.sismember(keys.linkedDevices(), deviceId)).to.equal(1);

    const status = await call(`${t.api}/status`, { token });
    expect(status.status).to.equal(200);
    expect(status.body).to.deep.equal({
      success: true,
      status: 'connected',
      engine: 'cloud',
      phone: '15550200000',
      name: n.verifiedName,
      qualityRating: 'GREEN',
      messagingTier: 'TIER_1K',
    });

    const pairing = await call(`${t.api}/connect?method=pairingCode&phoneNumber=15550200000`, { token });
    expect(pairing.status).to.equal(400);
    expect(pairing.body).to.deep.equal({
      success: false,
      error: ERRORS.invalidRequest,
      details: [{ path: ['method'], message: ERRORS.cloudNeedsNoPairing }],
    });

    const gone = await call(`${t.api}/disconnect`, { method: 'POST', token });
    expect(gone.status).to.equal(200);
    expect(gone.body).to.deep.equal({ success: true, message: CONNECTION_MESSAGES.cloudForgotten });
    expect(await t.redis.sismember(keys.linkedDevices(), deviceId)).to.equal(0);
    expect(await t.redis.exists(keys.cloudDevice(deviceId))).to.equal(0);
    expect(await t.redis.hget(keys.cloudNumbers(), n.id)).to.equal(null);
    // A device again without an engine of its own: /status is the session's, /cloud is a 404.
    const after = await call(`${t.api}/status`, { token });
    expect(after.body).to.deep.equal({ success: true, status: 'disconnected' });
    const none = await call(`${t.api}/cloud`, { token });
    expect([none.status, none.body]).to.deep.equal([
      404,
      { success: false, error: ERRORS.cloudNotConfigured },
    ]);
    const deleted = await call(`${t.api}/cloud`, { method: 'DELETE', token });
    expect(deleted.status).to.equal(404);
  });

  it('When DELETE /cloud forgets a connected device, then it leaves the senders and its number is free for another device', async () => {
    const [a, b] = [freshDeviceId(), freshDeviceId()];
    const [tokenA, tokenB] = [await createToken(t, { deviceId: a }), await createToken(t, { deviceId: b })];
    expect(
      (await call(`${t.api}/cloud`, { method: 'PUT', token: tokenA, json: body(N[1]!) })).status,
    ).to.equal(200);
    expect((await call(`${t.api}/connect`, { token: tokenA })).status).to.equal(200);
    const status = await call(`${t.api}/status`, { token: tokenA });
    expect(status.body).to.deep.include({ qualityRating: 'YELLOW' });

    const deleted = await call(`${t.api}/cloud`, { method: 'DELETE', token: tokenA });
    expect(deleted.body).to.deep.equal({ success: true, message: CONNECTION_MESSAGES.cloudForgotten });
    expect(await t.redis.sismember(keys.linkedDevices(), a)).to.equal(0);
    expect(
      (await call(`${t.api}/cloud`, { method: 'PUT', token: tokenB, json: body(N[1]!) })).status,
    ).to.equal(200);
    await call(`${t.api}/cloud`, { method: 'DELETE', token: tokenB });
  });

  it('When a body is bad in any field, then 400 names the field and never repeats a secret', async () => {
    const token = await createToken(t, { deviceId: freshDeviceId() });
    const good = body(N[2]!);
    const leaky = 'EAA secret with space';
    const cases: [string, Record<string, unknown>][] = [
      ['phoneNumberId', { ...good, phoneNumberId: '+1 555 0100' }],
      ['wabaId', { ...good, wabaId: 'waba' }],
      ['accessToken', { ...good, accessToken: leaky }],
      ['accessToken', { ...good, accessToken: 'x'.repeat(4097) }],
      ['appSecret', { ...good, appSecret: 'line\nbreak-secret' }],
      ['verifyToken', { ...good, verifyToken: '' }],
      ['verifyToken', { ...good, verifyToken: 'bidi\u202everify' }],
      ['throughputPerSecond', { ...good, throughputPerSecond: 1001 }],
      ['throughputPerSecond', { ...good, throughputPerSecond: 0 }],
      ['graphVersion', { ...good, graphVersion: '21' }],
      ['otpTemplate', { ...good, otpTemplate: 'Has Caps' }],
      ['engine', { ...good, engine: 'cloud' }],
    ];
    for (const field of ['phoneNumberId', 'wabaId', 'accessToken', 'appSecret', 'verifyToken']) {
      const { [field]: _gone, ...rest } = good as Record<string, unknown>;
      cases.push([field, rest]);
    }
    for (const [field, json] of cases) {
      // A token each: changes count against RATE_LIMIT_CONNECT (15 a minute per token).
      const res = await call(`${t.api}/cloud`, {
        method: 'PUT',
        token: await createToken(t, { deviceId: freshDeviceId() }),
        json,
      });
      expect(res.status, `${field}: ${JSON.stringify(res.body)}`).to.equal(400);
      expect(res.body.error).to.equal(ERRORS.invalidRequest);
      expect((res.body.details as { path: string[] }[])[0]!.path, field).to.deep.equal([field]);
      for (const secret of [leaky, 'line\nbreak-secret', good.accessToken, good.appSecret])
        expect(JSON.stringify(res.body)).to.not.include(JSON.stringify(secret).slice(1, -1));
    }
    // Not JSON at all, and a body over 16 KB.
    expect(
      (
        await call(`${t.api}/cloud`, {
          method: 'PUT',
          token,
          body: 'x',
          headers: { 'content-type': 'application/json' },
        })
      ).status,
    ).to.equal(400);
    const big = await call(`${t.api}/cloud`, {
      method: 'PUT',
      token,
      json: { ...good, accessToken: 'x'.repeat(17_000) },
    });
    expect([big.status, big.body.error]).to.deep.equal([413, ERRORS.cloudBodyTooLarge]);
    expect(sim.sent()).to.deep.equal([]);
  });

  it('When Meta refuses the token (190), then 422 says what Meta said about accessToken, never the token, and nothing is stored', async () => {
    const deviceId = freshDeviceId();
    const token = await createToken(t, { deviceId });
    const wrong = 'EAAwrongtokenvalue123';
    const res = await call(`${t.api}/cloud`, {
      method: 'PUT',
      token,
      json: { ...body(N[2]!), accessToken: wrong },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(422);
    expect(res.body.error).to.equal(ERRORS.cloudCredentialsRefused);
    const [detail] = res.body.details as { path: string[]; message: string }[];
    expect(detail!.path).to.deep.equal(['accessToken']);
    expect(detail!.message).to.match(/^Meta \(error 190\/467\): /);
    expect(JSON.stringify(res.body)).to.not.include(wrong);
    expect(await t.redis.exists(keys.cloudDevice(deviceId))).to.equal(0);
    // A number id the token does not reach: about phoneNumberId.
    const other = await call(`${t.api}/cloud`, {
      method: 'PUT',
      token,
      json: { ...body(N[2]!), phoneNumberId: '123456' },
    });
    expect(other.status).to.equal(422);
    expect((other.body.details as { path: string[] }[])[0]!.path).to.deep.equal(['phoneNumberId']);
  });

  it('When the token expires after the device was configured, then /connect answers 422 and the device turns disconnected with the reason', async () => {
    const deviceId = freshDeviceId();
    const token = await createToken(t, { deviceId });
    const n = N[3]!;
    expect((await call(`${t.api}/cloud`, { method: 'PUT', token, json: body(n) })).status).to.equal(200);
    expect((await call(`${t.api}/connect`, { token })).status).to.equal(200);
    sim.expireToken(n.accessToken);
    const res = await call(`${t.api}/connect`, { token });
    expect(res.status).to.equal(422);
    expect((res.body.details as { message: string }[])[0]!.message).to.match(/^Meta \(error 190\/463\): /);
    const status = await call(`${t.api}/status`, { token });
    expect(status.body).to.deep.include({
      status: 'disconnected',
      engine: 'cloud',
      reason: 'cloud_token_expired',
    });
    expect(status.body).to.not.have.property('phone');
    const shown = await call(`${t.api}/cloud`, { token });
    expect(shown.body.data).to.deep.include({ status: 'disconnected', reason: 'cloud_token_expired' });
    await call(`${t.api}/disconnect`, { method: 'POST', token });
  });

  it('When another device already is the number, then 409 without naming that device', async () => {
    const [a, b] = [freshDeviceId(), freshDeviceId()];
    const n = N[4]!;
    const tokenA = await createToken(t, { deviceId: a });
    const tokenB = await createToken(t, { deviceId: b });
    expect((await call(`${t.api}/cloud`, { method: 'PUT', token: tokenA, json: body(n) })).status).to.equal(
      200,
    );
    const res = await call(`${t.api}/cloud`, {
      method: 'PUT',
      token: tokenB,
      json: body(n, 'another-verify'),
    });
    expect(res.status).to.equal(409);
    expect(res.body).to.deep.equal({ success: false, error: ERRORS.cloudNumberTaken });
    expect(await t.redis.exists(keys.cloudDevice(b))).to.equal(0);
    await call(`${t.api}/cloud`, { method: 'DELETE', token: tokenA });
  });

  it('When the device is linked by QR or code, or a pairing of it runs, then PUT answers 409 and it stays linked', async () => {
    const linked = freshDeviceId();
    await t.redis.set(keys.authCreds(linked), 'sealed-credentials-of-a-linked-account');
    const pairing = freshDeviceId();
    await t.redis.hset(keys.pairing(pairing), {
      pairingId: 'p-1',
      owner: 'conn-1',
      state: 'showing',
      method: 'qrCode',
    });
    for (const deviceId of [linked, pairing]) {
      const token = await createToken(t, { deviceId });
      const res = await call(`${t.api}/cloud`, { method: 'PUT', token, json: body(N[5]!) });
      expect(res.status, deviceId).to.equal(409);
      expect(res.body).to.deep.equal({ success: false, error: ERRORS.cloudDeviceLinked });
      expect(await t.redis.exists(keys.cloudDevice(deviceId))).to.equal(0);
    }
  });

  it('When a device token names another device, then 404; a pool token is refused as for every device route', async () => {
    const [mine, other] = [freshDeviceId(), freshDeviceId()];
    const token = await createToken(t, { deviceId: mine });
    for (const method of ['PUT', 'GET', 'DELETE']) {
      const res = await call(`${t.api}/devices/${other}/cloud`, {
        method,
        token,
        ...(method === 'PUT' ? { json: body(N[5]!) } : {}),
      });
      expect([res.status, res.body], method).to.deep.equal([
        404,
        { success: false, error: ERRORS.deviceNotFound },
      ]);
    }
    expect(await t.redis.exists(keys.cloudDevice(other))).to.equal(0);
    const pool = await createPoolToken(t, 'cloud');
    const refused = await call(`${t.api}/cloud`, { method: 'PUT', token: pool, json: body(N[5]!) });
    expect([refused.status, refused.body.error]).to.deep.equal([403, ERRORS.poolTokenNotAllowed]);
  });

  it("When a workspace token configures its own device, then it is served under /devices/{id}/; another workspace's device is 404", async () => {
    const workspace = async (id: string) => {
      expect((await adminCall(t, '/workspaces', { method: 'POST', json: { id, name: id } })).status).to.equal(
        201,
      );
      const minted = await adminCall(t, `/workspaces/${id}/tokens`, {
        method: 'POST',
        json: { name: 'owner' },
      });
      return minted.body.value as string;
    };
    const [a, b] = [`w${randomBytes(4).toString('hex')}`, `w${randomBytes(4).toString('hex')}`];
    const [tokenA, tokenB] = [await workspace(a), await workspace(b)];
    const device = (
      (await call(`${t.api}/devices`, { method: 'POST', token: tokenA })).body.data as { deviceId: string }
    ).deviceId;

    const theirs = await call(`${t.api}/devices/${device}/cloud`, {
      method: 'PUT',
      token: tokenB,
      json: body(N[5]!),
    });
    expect([theirs.status, theirs.body]).to.deep.equal([
      404,
      { success: false, error: ERRORS.deviceNotFound },
    ]);
    expect((await call(`${t.api}/devices/${device}/cloud`, { token: tokenB })).status).to.equal(404);
    expect((await call(`${t.api}/devices/${device}/connect`, { token: tokenB })).status).to.equal(404);
    expect(await t.redis.exists(keys.cloudDevice(device))).to.equal(0);
    const unnamed = await call(`${t.api}/cloud`, { method: 'PUT', token: tokenA, json: body(N[5]!) });
    expect([unnamed.status, unnamed.body.error]).to.deep.equal([400, ERRORS.deviceNotNamed]);

    const mine = await call(`${t.api}/devices/${device}/cloud`, {
      method: 'PUT',
      token: tokenA,
      json: body(N[5]!),
    });
    expect(mine.status, JSON.stringify(mine.body)).to.equal(200);
    expect(
      (await call(`${t.api}/devices/${device}/connect`, { method: 'POST', token: tokenA })).body,
    ).to.deep.equal({
      success: true,
      status: 'connected',
    });
    expect((await call(`${t.api}/devices/${device}/status`, { token: tokenA })).body).to.deep.include({
      status: 'connected',
      engine: 'cloud',
    });
    expect((await call(`${t.api}/devices/${device}/status`, { token: tokenB })).status).to.equal(404);
    await call(`${t.api}/devices/${device}/disconnect`, { method: 'POST', token: tokenA });
  });

  it('When the admin API configures, lists, connects and forgets a device, then every device shows its engine', async () => {
    const [cloudId, linkedId] = [freshDeviceId(), freshDeviceId()];
    await t.redis.sadd(keys.linkedDevices(), linkedId);
    const n = N[0]!;
    const put = await adminCall(t, `/devices/${cloudId}/cloud`, { method: 'PUT', json: body(n) });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect((await adminCall(t, `/devices/${cloudId}/cloud`)).body).to.deep.equal(put.body);
    // Configured, not yet connected: listed all the same (it has no session record).
    const first = (await adminCall(t, '/devices')).body.devices as Record<string, unknown>[];
    expect(first.find((d) => d.deviceId === cloudId)).to.deep.include({
      engine: 'cloud',
      status: 'disconnected',
    });
    const pairing = await adminCall(t, `/devices/${cloudId}/connect`, {
      method: 'POST',
      json: { method: 'pairingCode', phoneNumber: '15550200000' },
    });
    expect(pairing.status).to.equal(400);
    const connected = await adminCall(t, `/devices/${cloudId}/connect`, { method: 'POST', json: {} });
    expect(connected.body).to.deep.equal({ success: true, status: 'connected' });

    const listed = (await adminCall(t, '/devices')).body.devices as Record<string, unknown>[];
    expect(listed.find((d) => d.deviceId === cloudId)).to.deep.include({
      engine: 'cloud',
      status: 'connected',
      linked: true,
      phone: '15550200000',
      name: n.verifiedName,
    });
    expect(listed.find((d) => d.deviceId === linkedId)).to.deep.include({ engine: 'linked' });
    expect((await adminCall(t, `/devices/${cloudId}`)).body.device).to.deep.include({ engine: 'cloud' });

    const gone = await adminCall(t, `/devices/${cloudId}/disconnect`, { method: 'POST' });
    expect(gone.body).to.deep.equal({ success: true, message: CONNECTION_MESSAGES.cloudForgotten });
    expect((await adminCall(t, `/devices/${cloudId}`)).body.device).to.deep.include({ engine: 'linked' });
    expect((await adminCall(t, `/devices/${cloudId}/cloud`, { method: 'DELETE' })).status).to.equal(404);
    await t.redis.srem(keys.linkedDevices(), linkedId);
  });

  it('When everything above ran, then no secret is in Redis in the clear (every key read raw) nor in a log line', async () => {
    // A configuration kept for this check, connected so its profile and state exist too.
    const deviceId = freshDeviceId();
    const token = await createToken(t, { deviceId });
    expect((await call(`${t.api}/cloud`, { method: 'PUT', token, json: body(N[2]!) })).status).to.equal(200);
    await call(`${t.api}/connect`, { token });
    const raw = await t.redis.get(keys.cloudDevice(deviceId));
    expect(raw).to.be.a('string');
    noSecretIn(raw!, keys.cloudDevice(deviceId));
    let cursor = '0';
    do {
      const [next, found] = await t.redis.scan(cursor, 'MATCH', '*', 'COUNT', 1000);
      cursor = next;
      for (const key of found) {
        const type = await t.redis.type(key);
        const dump =
          type === 'string'
            ? await t.redis.get(key)
            : type === 'hash'
              ? JSON.stringify(await t.redis.hgetall(key))
              : type === 'set'
                ? JSON.stringify(await t.redis.smembers(key))
                : type === 'zset'
                  ? JSON.stringify(await t.redis.zrange(key, 0, -1))
                  : '';
        noSecretIn(`${key} ${dump ?? ''}`, key);
      }
    } while (cursor !== '0');
    noSecretIn(JSON.stringify(t.logs), 'the logs');
    await call(`${t.api}/cloud`, { method: 'DELETE', token });
  });
});

describe('API: a Cloud API device when the Graph API cannot be reached', () => {
  let t: TestApi;
  let hangsUp: net.Server;
  before(async () => {
    hangsUp = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => hangsUp.listen(0, '127.0.0.1', resolve));
    t = await startApi({ cloud: cloudAt(`http://127.0.0.1:${(hangsUp.address() as AddressInfo).port}`) });
  });
  after(async () => {
    await t.close();
    await new Promise((resolve) => hangsUp.close(resolve));
  });

  it('When PUT /cloud cannot reach Meta, then 502 and nothing is stored', async () => {
    const deviceId = freshDeviceId();
    const token = await createToken(t, { deviceId });
    const res = await call(`${t.api}/cloud`, {
      method: 'PUT',
      token,
      json: { phoneNumberId: '1', wabaId: '2', accessToken: 'tok', appSecret: 'sec', verifyToken: 'ver' },
    });
    expect([res.status, res.body]).to.deep.equal([
      502,
      { success: false, error: ERRORS.cloudGraphUnreachable },
    ]);
    expect(await t.redis.exists(keys.cloudDevice(deviceId))).to.equal(0);
  });
});
