import net, { type AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { startCloudSim, type CloudSimHandle } from '@mgw/cloud-sim';
import { ERRORS, keys } from '@mgw/contracts';
import { CloudDeviceStore, Encryption } from '@mgw/store';
import { loadApiConfig } from '../../../config.js';
import { call, createToken, freshDeviceId, type TestApi } from '../../../../test/helpers/api.js';
import { adminCall, startAdminApi } from '../../../../test/helpers/admin.js';

/**
 * GET /cloud/templates through the real API and Redis, with the Graph API played by the Cloud API
 * simulator (libs/cloud-sim) on loopback: a cloud device's number's templates on both surfaces
 * (the device's token, a workspace's token under /devices/{id}/, the admin API), the filters, the
 * refresh and its floor, a linked device, hostile queries, and Meta refusing or not answering.
 */

/** The API's config with CLOUD_GRAPH_URL at `url` and loopback allowed, read as the service reads its environment. */
const cloudAt = (url: string) =>
  loadApiConfig({
    ...process.env,
    NODE_ENV: 'test',
    CLOUD_GRAPH_URL: url,
    ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
    CLOUD_GRAPH_TIMEOUT_MS: '2000',
  }).cloud;

/** A number of the simulator's of its own (its own WABA, so its own templates), and its device. */
const newNumber = () => {
  const tag = randomBytes(4).toString('hex');
  const digits = String(parseInt(tag, 16));
  return {
    id: `71${digits}`,
    wabaId: `81${digits}`,
    displayPhoneNumber: '+1 555-030-0001',
    verifiedName: 'Template Shop',
    accessToken: `EAAtemplates${tag}secretvalue`,
    appSecret: `appsecret${tag}`,
  };
};
type SimNumber = ReturnType<typeof newNumber>;

const ORDER_UPDATE_AR = {
  name: 'order_update',
  language: 'ar',
  category: 'UTILITY' as const,
  status: 'PAUSED' as const,
  components: [
    { type: 'HEADER', format: 'IMAGE', example: { header_handle: ['https://example.com/h.jpg'] } },
    { type: 'BODY', text: 'تم شحن طلبك {{1}}.' },
    {
      type: 'BUTTONS',
      buttons: [
        { type: 'URL', text: 'تتبع', url: 'https://example.com/track/{{1}}' },
        { type: 'PHONE_NUMBER', text: 'اتصل', phone_number: '+15550300001' },
      ],
    },
  ],
};

describe('API: a Cloud API number’s message templates — GET /cloud/templates (Cloud API simulator)', () => {
  let t: TestApi;
  let sim: CloudSimHandle;
  let cloud: CloudDeviceStore;

  before(async () => {
    sim = await startCloudSim();
    t = await startAdminApi({ cloud: cloudAt(sim.url) });
    cloud = new CloudDeviceStore(t.redis, Encryption.fromEnv());
  });
  after(async () => {
    await t.close();
    await sim.close();
  });

  /** A device of a new number (its WABA holding the sample templates and `order_update` in Arabic), and its token. */
  const cloudDevice = async (): Promise<{ deviceId: string; token: string; n: SimNumber }> => {
    const n = newNumber();
    sim.addNumber(n);
    sim.addTemplate({
      wabaId: n.wabaId,
      name: 'verification_code',
      language: 'en_US',
      category: 'AUTHENTICATION',
      components: [
        { type: 'BODY', text: '*{{1}}* is your verification code.' },
        { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'COPY_CODE', text: 'Copy code' }] },
      ],
    });
    sim.addTemplate({
      wabaId: n.wabaId,
      name: 'order_update',
      language: 'en_US',
      category: 'UTILITY',
      components: [
        { type: 'BODY', text: 'Your order {{1}} has shipped.' },
        { type: 'FOOTER', text: 'Thank you' },
      ],
    });
    sim.addTemplate({ wabaId: n.wabaId, ...ORDER_UPDATE_AR });
    const deviceId = freshDeviceId();
    const token = await createToken(t, { deviceId });
    await cloud.set(deviceId, {
      phoneNumberId: n.id,
      wabaId: n.wabaId,
      accessToken: n.accessToken,
      appSecret: n.appSecret,
      verifyToken: `verify-${n.id}`,
    });
    return { deviceId, token, n };
  };
  const names = (body: Record<string, unknown>) =>
    ((body.data as { templates: { name: string; language: string }[] }).templates ?? []).map(
      (x) => `${x.name}/${x.language}`,
    );

  it("When a cloud device's token lists its templates, then each shows its status, category, parameters and components, read from Meta once", async () => {
    const { deviceId, token } = await cloudDevice();
    const res = await call(`${t.api}/cloud/templates`, { token });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.headers.get('x-ratelimit-limit')).to.equal(String(t.config.rateLimits.status));
    const data = res.body.data as { templates: unknown[]; fetchedAt: string };
    expect(data.templates).to.deep.equal([
      {
        name: 'order_update',
        language: 'ar',
        status: 'PAUSED',
        category: 'UTILITY',
        parameters: { header: 1, body: 1, buttons: { 0: 1 } },
        components: [
          { type: 'HEADER', format: 'IMAGE' },
          { type: 'BODY', text: 'تم شحن طلبك {{1}}.' },
          {
            type: 'BUTTONS',
            buttons: [
              { type: 'URL', text: 'تتبع', url: 'https://example.com/track/{{1}}' },
              { type: 'PHONE_NUMBER', text: 'اتصل', phoneNumber: '+15550300001' },
            ],
          },
        ],
      },
      {
        name: 'order_update',
        language: 'en_US',
        status: 'APPROVED',
        category: 'UTILITY',
        parameters: { body: 1 },
        components: [
          { type: 'BODY', text: 'Your order {{1}} has shipped.' },
          { type: 'FOOTER', text: 'Thank you' },
        ],
      },
      {
        name: 'verification_code',
        language: 'en_US',
        status: 'APPROVED',
        category: 'AUTHENTICATION',
        parameters: { body: 1, buttons: { 0: 1 } },
        components: [
          { type: 'BODY', text: '*{{1}}* is your verification code.' },
          { type: 'BUTTONS', buttons: [{ type: 'OTP', text: 'Copy code', otpType: 'COPY_CODE' }] },
        ],
      },
    ]);
    // Kept for /send's check too: the second list is the kept one (the same read time).
    const kept = JSON.parse((await t.redis.get(keys.cloudTemplates(deviceId)))!) as { fetchedAt: number };
    expect(data.fetchedAt, 'when the kept list was read').to.equal(new Date(kept.fetchedAt).toISOString());
    const again = await call(`${t.api}/cloud/templates`, { token });
    expect(again.body).to.deep.equal(res.body);
  });

  it('When the query names a name, a language or a status, then only the templates that have it are listed', async () => {
    const { token } = await cloudDevice();
    const list = async (query: string) => {
      const res = await call(`${t.api}/cloud/templates?${query}`, { token });
      expect(res.status, `${query}: ${JSON.stringify(res.body)}`).to.equal(200);
      return names(res.body);
    };
    expect(await list('name=order_update')).to.deep.equal(['order_update/ar', 'order_update/en_US']);
    expect(await list('name=order_update&language=en_US')).to.deep.equal(['order_update/en_US']);
    expect(await list('status=paused')).to.deep.equal(['order_update/ar']);
    expect(await list('status=APPROVED&language=en_US')).to.deep.equal([
      'order_update/en_US',
      'verification_code/en_US',
    ]);
    expect(await list('name=no_such_template')).to.deep.equal([]);
  });

  it('When the admin API lists a device’s templates, then it answers as the device’s token does; a workspace token reaches its own device only', async () => {
    const { deviceId, token } = await cloudDevice();
    const mine = await call(`${t.api}/cloud/templates?name=verification_code`, { token });
    const admin = await adminCall(t, `/devices/${deviceId}/cloud/templates?name=verification_code`);
    expect(admin.status, JSON.stringify(admin.body)).to.equal(200);
    expect(admin.body).to.deep.equal(mine.body);
    const bad = await adminCall(t, `/devices/${deviceId}/cloud/templates?status=<b>`);
    expect([bad.status, bad.body.error]).to.deep.equal([400, ERRORS.invalidRequest]);

    const workspace = `w${randomBytes(4).toString('hex')}`;
    expect(
      (await adminCall(t, '/workspaces', { method: 'POST', json: { id: workspace, name: workspace } }))
        .status,
    ).to.equal(201);
    const owner = (
      await adminCall(t, `/workspaces/${workspace}/tokens`, { method: 'POST', json: { name: 'owner' } })
    ).body.value as string;
    const theirs = await call(`${t.api}/devices/${deviceId}/cloud/templates`, { token: owner });
    expect([theirs.status, theirs.body]).to.deep.equal([
      404,
      { success: false, error: ERRORS.deviceNotFound },
    ]);
    const own = (
      (await call(`${t.api}/devices`, { method: 'POST', token: owner })).body.data as { deviceId: string }
    ).deviceId;
    const linked = await call(`${t.api}/devices/${own}/cloud/templates`, { token: owner });
    expect([linked.status, linked.body]).to.deep.equal([
      404,
      { success: false, error: ERRORS.cloudNotConfigured },
    ]);
  });

  it('When the device is linked (not a Cloud API number), then 404 says so on both surfaces and Meta is not asked', async () => {
    const deviceId = freshDeviceId();
    const token = await createToken(t, { deviceId });
    const res = await call(`${t.api}/cloud/templates`, { token });
    expect([res.status, res.body]).to.deep.equal([404, { success: false, error: ERRORS.cloudNotConfigured }]);
    const admin = await adminCall(t, `/devices/${deviceId}/cloud/templates`);
    expect([admin.status, admin.body]).to.deep.equal([
      404,
      { success: false, error: ERRORS.cloudNotConfigured },
    ]);
    expect(await t.redis.exists(keys.cloudTemplates(deviceId))).to.equal(0);
  });

  it('When the query is hostile — unknown keys, repeated or malformed values, bad Unicode — then 400 names it, never a 500', async () => {
    const { token } = await cloudDevice();
    const queries: [string, string][] = [
      ['page=2', 'page'],
      ['name=Order%20Update', 'name'],
      ['name=a&name=b', 'name'],
      ['name[x]=1', 'name[x]'],
      [`name=${'a'.repeat(600)}`, 'name'],
      ['language=english', 'language'],
      [`language=${'e'.repeat(40)}`, 'language'],
      ['status=%3Cscript%3E', 'status'],
      ['status=', 'status'],
      ['refresh=maybe', 'refresh'],
      ['name=%ED%A0%80', 'name'],
      ['language=en_US%00', 'language'],
    ];
    for (const [query, field] of queries) {
      const res = await call(`${t.api}/cloud/templates?${query}`, { token });
      expect(res.status, `${query}: ${JSON.stringify(res.body)}`).to.equal(400);
      expect(res.body.error, query).to.equal(ERRORS.invalidRequest);
      const details = res.body.details as { path: string[] }[];
      expect(
        details.map((d) => d.path[0]),
        query,
      ).to.include(field);
    }
  });

  it('When a template is added at Meta, then the kept list does not show it; a refresh does once the floor (30 s) since the last read has passed', async () => {
    const { deviceId, token, n } = await cloudDevice();
    const first = await call(`${t.api}/cloud/templates`, { token });
    sim.addTemplate({
      wabaId: n.wabaId,
      name: 'spring_sale',
      language: 'en',
      category: 'MARKETING',
      components: [{ type: 'BODY', text: 'Spring sale: {{1}} off' }],
    });
    expect(names((await call(`${t.api}/cloud/templates`, { token })).body)).not.to.include('spring_sale/en');
    // Within the floor a refresh is the kept list (no stream of Graph calls).
    const early = await call(`${t.api}/cloud/templates?refresh=true`, { token });
    expect(early.body).to.deep.equal(first.body);
    // The kept list as if read 31 s ago.
    const key = keys.cloudTemplates(deviceId);
    const kept = JSON.parse((await t.redis.get(key))!) as { fetchedAt: number };
    await t.redis.set(key, JSON.stringify({ ...kept, fetchedAt: kept.fetchedAt - 31_000 }), 'KEEPTTL');
    const refreshed = await call(`${t.api}/cloud/templates?refresh=true&name=spring_sale`, { token });
    expect(refreshed.status).to.equal(200);
    expect(names(refreshed.body)).to.deep.equal(['spring_sale/en']);
    const data = refreshed.body.data as { fetchedAt: string };
    expect(Date.parse(data.fetchedAt)).to.be.greaterThan(kept.fetchedAt);
  });

  it("When Meta refuses the device's token, then 422 says what Meta said about the token, never the token", async () => {
    const { token, n } = await cloudDevice();
    sim.expireToken(n.accessToken);
    const res = await call(`${t.api}/cloud/templates`, { token });
    expect(res.status).to.equal(422);
    expect(res.body.error).to.equal(ERRORS.cloudCredentialsRefused);
    const details = res.body.details as { path: string[]; message: string }[];
    expect(details[0]!.path).to.deep.equal(['accessToken']);
    expect(details[0]!.message).to.match(/^Meta \(error 190/);
    expect(JSON.stringify(res.body)).not.to.include(n.accessToken);
  });
});

describe('API: GET /cloud/templates when the Graph API does not answer', () => {
  let t: TestApi;
  let hangsUp: net.Server;

  before(async () => {
    hangsUp = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => hangsUp.listen(0, '127.0.0.1', resolve));
    t = await startAdminApi({
      cloud: cloudAt(`http://127.0.0.1:${(hangsUp.address() as AddressInfo).port}`),
    });
  });
  after(async () => {
    await t.close();
    await new Promise((resolve) => hangsUp.close(resolve));
  });

  it('When nothing is kept, then 502 says Meta could not be reached; with a list kept, a refresh answers it', async () => {
    const deviceId = freshDeviceId();
    const token = await createToken(t, { deviceId });
    const n = newNumber();
    await new CloudDeviceStore(t.redis, Encryption.fromEnv()).set(deviceId, {
      phoneNumberId: n.id,
      wabaId: n.wabaId,
      accessToken: n.accessToken,
      appSecret: n.appSecret,
      verifyToken: 'verify',
    });
    const res = await call(`${t.api}/cloud/templates`, { token });
    expect([res.status, res.body]).to.deep.equal([
      502,
      { success: false, error: ERRORS.cloudGraphUnreachable },
    ]);
    const fetchedAt = Date.now() - 120_000;
    await t.redis.set(
      keys.cloudTemplates(deviceId),
      JSON.stringify({ wabaId: n.wabaId, fetchedAt, templates: [] }),
      'EX',
      600,
    );
    const kept = await call(`${t.api}/cloud/templates?refresh=true`, { token });
    expect([kept.status, kept.body]).to.deep.equal([
      200,
      { success: true, data: { templates: [], fetchedAt: new Date(fetchedAt).toISOString() } },
    ]);
  });
});
