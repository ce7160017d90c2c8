import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { keys } from '@mgw/contracts';
import { markLinked } from '@mgw/store';
import { useStack, waitFor } from '@mgw/testing';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  type TestApi,
} from '../../../../test/helpers/api.js';
import { adminCall, startAdminApi } from '../../../../test/helpers/admin.js';

/**
 * Workspaces over a real API and Redis (docs/workspaces.md): the operator makes two, each gets a
 * workspace token, creates and names its devices, mints tokens; neither reaches the other's.
 */
describe('API: workspaces — the operator makes them, their tokens act on their own devices only', () => {
  let t: TestApi;
  const ws = () => `w${randomBytes(4).toString('hex')}`;
  const [a, b] = [ws(), ws()];
  let tokenA: string;
  let tokenB: string;

  /** The operator makes a workspace and mints its first workspace token. */
  const workspace = async (id: string, quotas: Record<string, number> = {}) => {
    const made = await adminCall(t, '/workspaces', {
      method: 'POST',
      json: { id, name: `Customer ${id}`, quotas },
    });
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
    const minted = await adminCall(t, `/workspaces/${id}/tokens`, {
      method: 'POST',
      json: { name: 'owner' },
    });
    expect(minted.status, JSON.stringify(minted.body)).to.equal(201);
    expect(minted.body.token).to.deep.include({ workspaceId: id, name: 'owner' });
    expect(minted.body.token).to.not.have.property('deviceId');
    return minted.body.value as string;
  };
  const newDevice = async (token: string) => {
    const made = await call(`${t.api}/devices`, { method: 'POST', token });
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
    return (made.body.data as { deviceId: string }).deviceId;
  };

  before(async () => {
    // No sender runs here: an OTP's wait ends soon, unanswered (504, and the OTP fails otp_expired).
    t = await startAdminApi({ otpWaitTimeoutMs: 500 });
    tokenA = await workspace(a, { devices: 2 });
    tokenB = await workspace(b);
  });
  after(async () => {
    await t.close();
  });

  it('When a workspace token creates devices, then each has a random id, is listed as its own, and the quota stops the third with 429 naming it', async () => {
    const first = await newDevice(tokenA);
    const second = await newDevice(tokenA);
    expect(first)
      .to.match(/^d[0-9a-f]{16}$/)
      .and.not.equal(second);
    const listed = await call(`${t.api}/devices`, { token: tokenA });
    expect(listed.status).to.equal(200);
    expect((listed.body.data as { deviceId: string }[]).map((d) => d.deviceId)).to.have.members([
      first,
      second,
    ]);
    const third = await call(`${t.api}/devices`, { method: 'POST', token: tokenA });
    expect(third.status).to.equal(429);
    expect(third.body).to.deep.equal({
      success: false,
      error: 'Workspace quota reached',
      details: [
        {
          path: ['quotas', 'devices'],
          message: "The workspace's devices quota (2) is reached",
          quota: 'devices',
          limit: 2,
          resetsAt: null,
        },
      ],
    });
    const mine = await call(`${t.api}/workspace`, { token: tokenA });
    expect(mine.body.data).to.deep.include({ id: a, status: 'active', devices: 2, quotas: { devices: 2 } });
    expect(await t.redis.hget(keys.deviceWorkspaces(), first)).to.equal(a);
  });

  it("When a workspace token names its device in the path, then every route acts on that device; another workspace's device is 404 as if none", async () => {
    const [mine] = (await call(`${t.api}/devices`, { token: tokenA })).body.data as { deviceId: string }[];
    await markConnected(t.redis, mine!.deviceId);
    const status = await call(`${t.api}/devices/${mine!.deviceId}/status`, { token: tokenA });
    expect(status.status, JSON.stringify(status.body)).to.equal(200);
    expect(status.body).to.deep.include({ status: 'connected', phone: '15550001111' });
    const sent = await call(`${t.api}/devices/${mine!.deviceId}/send`, {
      method: 'POST',
      token: tokenA,
      json: { to: '15550002001', text: 'hello' },
    });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(202);
    const messageId = sent.body.messageId as string;
    expect(
      (await call(`${t.api}/devices/${mine!.deviceId}/messages/${messageId}`, { token: tokenA })).status,
    ).to.equal(200);

    // B names A's device, a device nobody has, and an id no device could have: the same 404.
    const theirs = await newDevice(tokenB);
    for (const path of [
      `/devices/${mine!.deviceId}/status`,
      `/devices/${mine!.deviceId}/messages/${messageId}`,
      `/devices/${freshDeviceId()}/status`,
      '/devices/NOT_AN_ID/status',
    ]) {
      const r = await call(`${t.api}${path}`, { token: tokenB });
      expect(r.status, path).to.equal(404);
      expect(r.body, path).to.deep.equal({ success: false, error: 'Device not found' });
    }
    expect((await call(`${t.api}/devices/${mine!.deviceId}`, { token: tokenB })).status).to.equal(404);
    // B's own message lookups never find A's message, even on B's own device.
    const viaOwn = await call(`${t.api}/devices/${theirs}/messages/${messageId}`, { token: tokenB });
    expect(viaOwn.status).to.equal(404);
    // Without naming a device, a workspace token is told how (it acts on no device by default).
    const unnamed = await call(`${t.api}/status`, { token: tokenB });
    expect(unnamed.status).to.equal(400);
    expect(unnamed.body.error).to.match(/name the device/);
  });

  it("When a workspace token calls MCP for its device, then the tool acts on that device; for another workspace's device, 404", async () => {
    const [mine] = (await call(`${t.api}/devices`, { token: tokenA })).body.data as { deviceId: string }[];
    const rpc = (deviceId: string, token: string) =>
      fetch(`${t.api}/devices/${deviceId}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'get_status', arguments: {} },
        }),
      });
    const answer = await rpc(mine!.deviceId, tokenA);
    expect(answer.status).to.equal(200);
    const body = (await answer.json()) as { result: { isError?: boolean; content: { text: string }[] } };
    expect(body.result.isError ?? false, JSON.stringify(body)).to.equal(false);
    expect(JSON.parse(body.result.content[0]!.text)).to.deep.include({ status: 'connected' });
    const [theirs] = (await call(`${t.api}/devices`, { token: tokenB })).body.data as { deviceId: string }[];
    expect((await rpc(theirs!.deviceId, tokenA)).status).to.equal(404);
  });

  it('When a workspace token mints a device token, then it acts on that device only; tokens of other workspaces are not listed nor revocable', async () => {
    const [mine] = (await call(`${t.api}/devices`, { token: tokenA })).body.data as { deviceId: string }[];
    const minted = await call(`${t.api}/tokens`, {
      method: 'POST',
      token: tokenA,
      json: { name: 'shop', deviceId: mine!.deviceId, expiresIn: '1d' },
    });
    expect(minted.status, JSON.stringify(minted.body)).to.equal(201);
    const device = minted.body.data as { token: { id: string; deviceId: string }; value: string };
    expect(device.token.deviceId).to.equal(mine!.deviceId);
    expect((await call(`${t.api}/status`, { token: device.value })).status).to.equal(200);
    const [theirs] = (await call(`${t.api}/devices`, { token: tokenB })).body.data as { deviceId: string }[];
    expect(
      (await call(`${t.api}/devices/${theirs!.deviceId}/status`, { token: device.value })).status,
    ).to.equal(404);
    // A device token does not act on the workspace.
    expect((await call(`${t.api}/devices`, { token: device.value })).status).to.equal(403);
    // B cannot mint a token for A's device, list A's tokens, or revoke them.
    const stolen = await call(`${t.api}/tokens`, {
      method: 'POST',
      token: tokenB,
      json: { name: 'x', deviceId: mine!.deviceId },
    });
    expect(stolen.status).to.equal(404);
    const listB = (await call(`${t.api}/tokens`, { token: tokenB })).body.data as { id: string }[];
    expect(listB.map((x) => x.id)).to.not.include(device.token.id);
    expect(
      (await call(`${t.api}/tokens/${device.token.id}`, { method: 'DELETE', token: tokenB })).status,
    ).to.equal(404);
    const revoked = await call(`${t.api}/tokens/${device.token.id}`, { method: 'DELETE', token: tokenA });
    expect(revoked.status).to.equal(200);
    expect((await call(`${t.api}/status`, { token: device.value })).status).to.equal(401);
  });

  it('When the operator suspends a workspace, then its tokens get 403 at once and the other workspace is served; resumed, it is served again', async () => {
    const suspended = await adminCall(t, `/workspaces/${b}`, {
      method: 'PATCH',
      json: { status: 'suspended' },
    });
    expect(suspended.status).to.equal(200);
    expect(suspended.body.workspace).to.deep.include({ id: b, status: 'suspended' });
    const refused = await call(`${t.api}/devices`, { token: tokenB });
    expect(refused.status).to.equal(403);
    expect(refused.body.error).to.equal('This workspace is suspended');
    expect((await call(`${t.api}/devices`, { token: tokenA })).status).to.equal(200);
    await adminCall(t, `/workspaces/${b}`, { method: 'PATCH', json: { status: 'active' } });
    expect((await call(`${t.api}/devices`, { token: tokenB })).status).to.equal(200);
  });

  it('When a token from before workspaces has no device link, then it keeps acting on the default device only (an upgrade widens no reach)', async () => {
    const legacy = await createToken(t);
    const other = freshDeviceId();
    const named = await call(`${t.api}/devices/${other}/status`, { token: legacy });
    expect(named.status).to.equal(404);
    const own = await call(`${t.api}/devices/${t.config.defaultDeviceId}/status`, { token: legacy });
    expect(own.status).to.equal(200);
    expect((await call(`${t.api}/status`, { token: legacy })).status).to.equal(200);
    expect((await call(`${t.api}/devices`, { token: legacy })).status).to.equal(403);
  });

  it('When the operator lists workspaces and gives one a device, then the answers name each with its counts; a device in use elsewhere is refused', async () => {
    const list = await adminCall(t, '/workspaces');
    expect(list.status).to.equal(200);
    const ids = (list.body.workspaces as { id: string }[]).map((w) => w.id);
    expect(ids).to.include.members([a, b, 'default']);
    const dup = await adminCall(t, '/workspaces', { method: 'POST', json: { id: a, name: 'again' } });
    expect(dup.status).to.equal(409);
    const bad = await adminCall(t, '/workspaces', { method: 'POST', json: { id: 'Bad Id', name: 'x' } });
    expect(bad.status).to.equal(400);
    const chosen = freshDeviceId();
    const given = await adminCall(t, `/workspaces/${b}/devices/${chosen}`, { method: 'PUT' });
    expect(given.status, JSON.stringify(given.body)).to.equal(200);
    const [aDevice] = (await call(`${t.api}/devices`, { token: tokenA })).body.data as { deviceId: string }[];
    const taken = await adminCall(t, `/workspaces/${b}/devices/${aDevice!.deviceId}`, { method: 'PUT' });
    expect(taken.status).to.equal(409);
    const linkedDefault = freshDeviceId();
    await markConnected(t.redis, linkedDefault);
    expect(
      (await adminCall(t, `/workspaces/${b}/devices/${linkedDefault}`, { method: 'PUT' })).status,
    ).to.equal(409);
    expect((await adminCall(t, '/workspaces/no-such-ws')).status).to.equal(404);
  });
  /** Today's UTC day, and when it ends (the daily quota's reset). */
  const today = () => new Date().toISOString().slice(0, 10);
  const tomorrow = () => new Date(Date.parse(`${today()}T00:00:00Z`) + 86_400_000).toISOString();
  const sendFrom = (token: string, device: string, to: string | string[]) =>
    call(`${t.api}/devices/${device}/send`, { method: 'POST', token, json: { to, text: 'counted' } });
  const quotaDetail = (r: { body: Record<string, unknown> }) =>
    (r.body.details as Record<string, unknown>[])[0];

  it('When a workspace has a daily message quota, then a request past it is refused whole with 429 naming it and its reset; a refused send gives its room back', async () => {
    const id = ws();
    const token = await workspace(id, { messagesPerDay: 3 });
    const device = await newDevice(token);
    await markConnected(t.redis, device);
    expect((await sendFrom(token, device, '15550003001')).status).to.equal(202);
    const over = await sendFrom(token, device, ['15550003002', '15550003003', '15550003004']);
    expect(over.status, JSON.stringify(over.body)).to.equal(429);
    expect(over.body.error).to.equal('Workspace quota reached');
    expect(quotaDetail(over)).to.deep.equal({
      path: ['quotas', 'messagesPerDay'],
      message: "The workspace's messagesPerDay quota (3) is reached",
      quota: 'messagesPerDay',
      limit: 3,
      resetsAt: tomorrow(),
    });
    // A device that takes no messages: 409, and its reservation is given back.
    const unlinked = await newDevice(token);
    expect((await sendFrom(token, unlinked, '15550003005')).status).to.equal(409);
    expect(await t.redis.get(keys.workspaceDayCount(id, today()))).to.equal('1');
    expect((await sendFrom(token, device, ['15550003002', '15550003003'])).status).to.equal(202);
    expect((await sendFrom(token, device, '15550003006')).status).to.equal(429);
    // Nothing of the refused requests was written: the device's records are the three accepted.
    expect(await t.redis.zcard(keys.messageIndex(device))).to.equal(3);
  });

  it('When a workspace has a queued-messages quota, then a request that would pass it is refused with 429 and nothing is queued', async () => {
    const id = ws();
    const token = await workspace(id, { queuedMessages: 2 });
    const [one, two] = [await newDevice(token), await newDevice(token)];
    await Promise.all([markConnected(t.redis, one), markConnected(t.redis, two)]);
    expect((await sendFrom(token, one, '15550003101')).status).to.equal(202);
    // The quota is the workspace's: the second device's list finds one queued already.
    const over = await sendFrom(token, two, ['15550003102', '15550003103']);
    expect(over.status).to.equal(429);
    expect(quotaDetail(over)).to.include({ quota: 'queuedMessages', limit: 2, resetsAt: null });
    expect(await t.redis.zcard(keys.messageIndex(two))).to.equal(0);
    expect((await sendFrom(token, two, '15550003102')).status).to.equal(202);
  });

  it('When a workspace has a media bytes quota, then an upload past what its devices keep is refused with 429 naming it', async () => {
    const id = ws();
    const token = await workspace(id, { mediaBytes: 1000 });
    const device = await newDevice(token);
    await markConnected(t.redis, device);
    await markLinked(t.redis, device);
    const upload = (bytes: number) =>
      call(`${t.api}/devices/${device}/media`, {
        token,
        body: randomBytes(bytes),
        headers: { 'content-type': 'application/octet-stream' },
      });
    const first = await upload(600);
    expect(first.status, JSON.stringify(first.body)).to.equal(201);
    const over = await upload(600);
    expect(over.status).to.equal(429);
    expect(quotaDetail(over)).to.include({ quota: 'mediaBytes', limit: 1000, resetsAt: null });
    expect((await upload(400)).status).to.equal(201);
  });

  it('When a workspace reads its usage, then each day counts what its records hold, as JSON and as CSV; the operator reads any; bad ranges are 400', async () => {
    const id = ws();
    const token = await workspace(id);
    const [one, two] = [await newDevice(token), await newDevice(token)];
    await Promise.all([markConnected(t.redis, one), markConnected(t.redis, two)]);
    expect((await sendFrom(token, one, ['15550003201', '15550003202'])).status).to.equal(202);
    expect((await sendFrom(token, two, '15550003203')).status).to.equal(202);
    const otp = await call(`${t.api}/devices/${two}/otp`, {
      method: 'POST',
      token,
      json: { phone: '15550003204', code: '123456' },
    });
    expect(otp.status, JSON.stringify(otp.body)).to.equal(504);

    const json = await call(`${t.api}/workspace/usage`, { token });
    expect(json.status, JSON.stringify(json.body)).to.equal(200);
    const usage = json.body.data as {
      from: string;
      to: string;
      days: Record<string, unknown>[];
      total: Record<string, unknown>;
    };
    expect(usage.to).to.equal(today());
    expect(usage.days).to.have.length(30);
    expect(usage.days.at(-1)).to.deep.include({ day: today(), accepted: 4, otp: 1, sent: 0, failed: 1 });
    expect(usage.total).to.deep.include({ accepted: 4, otp: 1, failed: 1 });
    expect(usage.total.failedByReason).to.deep.equal({ otp_expired: 1 });
    // The same numbers as the records: every message accepted is in its device's index.
    const recorded =
      (await t.redis.zcard(keys.messageIndex(one))) + (await t.redis.zcard(keys.messageIndex(two)));
    expect(recorded).to.equal(4);

    const csv = await fetch(`${t.api}/workspace/usage?format=csv&from=${today()}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(csv.status).to.equal(200);
    expect(csv.headers.get('content-type')).to.match(/^text\/csv/);
    expect(csv.headers.get('content-disposition')).to.equal(
      `attachment; filename="usage-${id}-${today()}-${today()}.csv"`,
    );
    const [header, row, end] = (await csv.text()).split('\r\n');
    expect(header).to.match(
      /^workspace,day,accepted,otp,sent,delivered,read,failed,received,mediaBytes,failed:/,
    );
    expect(row!.split(',').slice(0, 10)).to.deep.equal([id, today(), '4', '1', '0', '0', '0', '1', '0', '0']);
    const reasons = header!.split(',');
    expect(row!.split(',')[reasons.indexOf('failed:otp_expired')]).to.equal('1');
    expect(end).to.equal('');

    const admin = await adminCall(t, `/workspaces/${id}/usage?from=${today()}&to=${today()}`);
    expect(admin.status).to.equal(200);
    expect((admin.body.usage as { days: unknown[] }).days).to.have.length(1);
    // Another workspace's usage holds none of these.
    const other = await call(`${t.api}/workspace/usage?from=${today()}`, { token: tokenB });
    expect((other.body.data as { total: { accepted: number } }).total.accepted).to.equal(0);
    for (const query of [
      'from=2026-02-30',
      `from=${today()}&to=2020-01-01`,
      'from=2020-01-01&to=2020-12-31',
      'format=xml',
    ]) {
      const bad = await call(`${t.api}/workspace/usage?${query}`, { token });
      expect(bad.status, query).to.equal(400);
    }
    // A device token reads no workspace's usage.
    const deviceToken = await call(`${t.api}/tokens`, {
      method: 'POST',
      token,
      json: { name: 'd', deviceId: one },
    });
    const refused = await call(`${t.api}/workspace/usage`, {
      token: (deviceToken.body.data as { value: string }).value,
    });
    expect(refused.status).to.equal(403);
  });
});

/**
 * A suspended workspace's devices over the whole stack (the real client against the simulator):
 * the operator suspends it, a message accepted before is held (`workspace_suspended`) and never
 * reaches WhatsApp while it lasts; resumed, it goes once.
 */
describe('e2e: a suspended workspace sends nothing and keeps its queue (real client, simulator)', function () {
  this.timeout(180_000);
  const ADMIN = 'workspace-admin-token-0123456789abcdef';
  const stack = useStack({ allInOne: true, env: { ADMIN_API_TOKEN: ADMIN } });
  const [account, contact] = ['15552700001', '15552700011'];
  const id = `susp${randomBytes(3).toString('hex')}`;
  let deviceToken = '';
  let owner = '';
  let device = '';

  before(async () => {
    await stack().simApi('POST', '/contacts', { phone: contact });
    expect(
      (await stack().adminApi(ADMIN, 'POST', '/workspaces', { id, name: 'Suspendable' })).status,
    ).to.equal(201);
    const minted = await stack().adminApi<{ value: string }>(ADMIN, 'POST', `/workspaces/${id}/tokens`, {
      name: 'owner',
    });
    owner = minted.body.value;
    const device0 = await stack().api<{ data: { deviceId: string } }>('POST', '/devices', undefined, owner);
    device = device0.body.data.deviceId;
    const made = await stack().api<{ data: { value: string } }>(
      'POST',
      '/tokens',
      { name: 'device', deviceId: device },
      owner,
    );
    deviceToken = made.body.data.value;
    await stack().linkByQr(account, 'Suspended Co', deviceToken);
  });

  it('When the workspace is suspended, then its queued message is held and not sent, its token refused; resumed, it is sent once', async () => {
    // Queued for a few seconds ahead, so that it is in the queue when the suspension comes.
    const sendAt = new Date(Date.now() + 4000).toISOString();
    const sent = await stack().api<{ messageId: string }>(
      'POST',
      '/send',
      { to: contact, text: 'after the pause', sendAt },
      deviceToken,
    );
    expect(sent.status, JSON.stringify(sent.body)).to.equal(202);
    const { messageId } = sent.body;
    const suspended = await stack().adminApi(ADMIN, 'PATCH', `/workspaces/${id}`, { status: 'suspended' });
    expect(suspended.status).to.equal(200);
    expect((await stack().api('GET', '/status', undefined, deviceToken)).status, 'its token').to.equal(403);
    const record = () =>
      stack().adminApi<{ message: { status: string; held?: { reason: string } } }>(
        ADMIN,
        'GET',
        `/devices/${device}/messages/${messageId}`,
      );
    await waitFor(async () => (await record()).body.message.held?.reason === 'workspace_suspended', {
      timeoutMs: 20_000,
      what: 'the message held for the suspended workspace',
    });
    const arrived = async () =>
      (await stack().inbox(contact)).filter((m) => m.text === 'after the pause').length;
    expect(await arrived(), 'nothing reached WhatsApp while suspended').to.equal(0);
    expect((await record()).body.message.status).to.equal('queued');

    await stack().adminApi(ADMIN, 'PATCH', `/workspaces/${id}`, { status: 'active' });
    // Held messages are looked at again every 30 s (SUSPENDED_RECHECK_MS).
    await waitFor(async () => (await arrived()) === 1, {
      timeoutMs: 60_000,
      what: 'the message sent after the resume',
    });
    await waitFor(async () => (await record()).body.message.status !== 'queued', {
      timeoutMs: 10_000,
      what: 'its record',
    });
    await new Promise((r) => setTimeout(r, 1000));
    expect(await arrived(), 'sent once').to.equal(1);
    expect((await stack().api('GET', '/status', undefined, deviceToken)).status).to.equal(200);
  });

  it('When its device has sent and received through WhatsApp, then its usage counts them as its records do', async () => {
    await stack().simApi('POST', `/contacts/${contact}/send`, { to: account, text: 'a reply' });
    const day = new Date().toISOString().slice(0, 10);
    type Usage = { data: { total: Record<string, number>; days: { day: string }[] } };
    const usage = () => stack().api<Usage>('GET', `/workspace/usage?from=${day}`, undefined, owner);
    await waitFor(async () => (await usage()).body.data.total.received === 1, {
      timeoutMs: 20_000,
      what: 'the reply counted as received',
    });
    const page = await stack().api<{ data: { messages: { status: string; direction: string }[] } }>(
      'GET',
      '/messages?limit=100',
      undefined,
      deviceToken,
    );
    const records = page.body.data.messages;
    const outbound = records.filter((m) => m.direction === 'outbound');
    const { total } = (await usage()).body.data;
    expect(total).to.deep.include({ accepted: outbound.length, received: 1, failed: 0 });
    expect(total.sent).to.equal(outbound.filter((m) => m.status !== 'queued').length);
    expect(records.filter((m) => m.direction === 'inbound')).to.have.length(1);
  });
});
