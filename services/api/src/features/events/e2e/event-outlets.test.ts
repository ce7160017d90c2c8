import { expect } from 'chai';
import { ERRORS, keys } from '@mgw/contracts';
import { publishEvent } from '@mgw/store';
import { WebhookReceiver, useStack, waitFor } from '@mgw/testing';
import { call, createToken, freshDeviceId, startApi, type TestApi } from '../../../../test/helpers/api.js';
import { ADMIN_API_TOKEN, signIn, startAdminApi } from '../../../../test/helpers/admin.js';
import { openSse, type Sse, type SseEvent } from '../../../../test/helpers/sse.js';

/**
 * The ways a device's events go out, and the dashboard's views of them:
 * - GET/PUT /events/brokers, what the device publishes to RabbitMQ, NATS and SQS (the API alone);
 * - the admin API's event stream, GET /api/admin/v1/events/stream (the API alone);
 * - the admin API's event log of a device and its ways out (whole stack, a real webhook receiver).
 */

describe('Events: GET/PUT /events/brokers sets what the device publishes to RabbitMQ, NATS and SQS', () => {
  let t: TestApi;
  let deviceId: string;
  let token: string;
  before(async () => (t = await startApi()));
  beforeEach(async () => {
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
  });
  after(async () => t.close());

  const get = (as = token) => call(`${t.api}/events/brokers`, { token: as });
  const put = (json: unknown, as = token) =>
    call(`${t.api}/events/brokers`, { method: 'PUT', token: as, json });

  it('When a device never set anything, then RabbitMQ and NATS are on for every event and SQS is off (opt-in)', async () => {
    const res = await get();
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      success: true,
      data: { rabbitmq: { enabled: true }, nats: { enabled: true }, sqs: { enabled: false } },
    });
  });

  it('When a device opts in to SQS with event types, then it is stored for it alone and the other transports keep theirs', async () => {
    const res = await put({ sqs: { enabled: true, events: ['message.received'] } });
    expect(res.status).to.equal(200);
    expect(res.body.data).to.deep.equal({
      rabbitmq: { enabled: true },
      nats: { enabled: true },
      sqs: { enabled: true, events: ['message.received'] },
    });
    expect(await t.redis.hgetall(keys.brokerSettings(deviceId))).to.deep.equal({
      sqs: JSON.stringify({ enabled: true, events: ['message.received'] }),
    });
    const other = await createToken(t, { deviceId: freshDeviceId() });
    expect(((await get(other)).body.data as { sqs: unknown }).sqs).to.deep.equal({ enabled: false });
  });

  it('When a device turns one transport off and picks types for the other, then both are stored for it alone and the other transport keeps its setting', async () => {
    const first = await put({ rabbitmq: { enabled: false } });
    expect(first.status).to.equal(200);
    expect(first.body.data).to.deep.equal({
      rabbitmq: { enabled: false },
      nats: { enabled: true },
      sqs: { enabled: false },
    });
    const second = await put({ nats: { enabled: true, events: ['message.delivered', 'message.read'] } });
    expect(second.body.data).to.deep.equal({
      rabbitmq: { enabled: false },
      nats: { enabled: true, events: ['message.delivered', 'message.read'] },
      sqs: { enabled: false },
    });
    expect((await get()).body.data).to.deep.equal(second.body.data);
    // What the notifier reads: one field per transport in the device's hash.
    expect(await t.redis.hgetall(keys.brokerSettings(deviceId))).to.deep.equal({
      rabbitmq: JSON.stringify({ enabled: false }),
      nats: JSON.stringify({ enabled: true, events: ['message.delivered', 'message.read'] }),
    });
    // Another device is untouched.
    const other = await createToken(t, { deviceId: freshDeviceId() });
    expect((await get(other)).body.data).to.deep.equal({
      rabbitmq: { enabled: true },
      nats: { enabled: true },
      sqs: { enabled: false },
    });
  });

  it('When a device with events in its log changes a transport twice, then the answers hold only enabled and events (each change’s log id and the settings before it are kept for the notifier alone)', async () => {
    await publishEvent(t.redis, deviceId, 'message.sent', { seq: 1 });
    await put({ sqs: { enabled: true } });
    await publishEvent(t.redis, deviceId, 'message.sent', { seq: 2 });
    const res = await put({ sqs: { enabled: true, events: ['message.read'] } });
    expect(res.status).to.equal(200);
    const answer = {
      rabbitmq: { enabled: true },
      nats: { enabled: true },
      sqs: { enabled: true, events: ['message.read'] },
    };
    expect(res.body.data).to.deep.equal(answer);
    expect((await get()).body.data).to.deep.equal(answer);
    // Stored for the notifier: the setting, the log id it took effect after, the ones before it.
    const stored = JSON.parse((await t.redis.hget(keys.brokerSettings(deviceId), 'sqs'))!) as {
      after: string;
      history: { enabled: boolean; after?: string }[];
    };
    expect(stored.after).to.match(/^\d+-\d+$/);
    expect(stored.history.map((h) => h.enabled)).to.deep.equal([true, false]);
    expect(stored.history[0]!.after).to.match(/^\d+-\d+$/);
    expect(stored.history[1]).to.not.have.property('after');
  });

  it('When the body names a broker address, an unknown transport or event type, or nothing, then 400 and nothing changes (the address is the operator’s, never a device’s)', async () => {
    for (const body of [
      { rabbitmq: { enabled: true, url: 'amqp://attacker.example.com' } },
      { nats: { enabled: true, servers: ['nats://10.0.0.1:4222'] } },
      { sqs: { enabled: true, queueUrl: 'https://sqs.us-east-1.amazonaws.com/1/attacker.fifo' } },
      { sqs: { enabled: true, credentials: { accessKeyId: 'x', secretAccessKey: 'y' } } },
      { kafka: { enabled: true } },
      { rabbitmq: { enabled: true, events: ['message.nope'] } },
      { rabbitmq: { enabled: true, events: [] } },
      { rabbitmq: {} },
      {},
    ]) {
      const res = await put(body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.success).to.equal(false);
      expect(res.body.error).to.equal(ERRORS.invalidRequest);
    }
    expect(await t.redis.exists(keys.brokerSettings(deviceId))).to.equal(0);
  });
});

interface AdminEvent {
  deviceId: string;
  id: string;
  type: string;
  data: { deviceId: string; n: number };
}

const parsed = (events: SseEvent[]) => events.map((e) => JSON.parse(e.data) as AdminEvent);

describe('Admin API: GET /api/admin/v1/events/stream, the dashboard\u2019s event stream (the API alone)', () => {
  let t: TestApi;
  let url: string;
  const open: Sse[] = [];
  before(async () => {
    t = await startAdminApi({
      eventStream: { perToken: 2, keepAliveMs: 200, maxBufferedBytes: 64 * 1024, stallMs: 500 },
    });
    url = `${t.url}/api/admin/v1/events/stream`;
  });
  afterEach(() => open.splice(0).forEach((s) => s.close()));
  after(async () => t.close());

  const stream = async (query: string, headers: Record<string, string>) => {
    const s = await openSse(`${url}${query ? `?${query}` : ''}`, headers);
    open.push(s);
    return s;
  };
  const publish = (deviceId: string, n: number, from = 0) =>
    Promise.all(
      Array.from({ length: n }, (_, i) =>
        publishEvent(t.redis, deviceId, 'message.read', { deviceId, n: from + i }),
      ),
    );

  it('When nobody signed in asks, then 401 and nothing streams', async () => {
    const res = await fetch(url);
    expect(res.status).to.equal(401);
    expect(((await res.json()) as { success: boolean }).success).to.equal(false);
    const apiToken = await fetch(url, { headers: { authorization: 'Bearer mgw_not-an-admin-token' } });
    expect(apiToken.status).to.equal(401);
  });

  it('When a signed-in session streams every device, then events of any device arrive live, each with its deviceId', async () => {
    const session = await signIn(t);
    const [a, b] = [freshDeviceId(), freshDeviceId()];
    await publish(a, 1, 900); // before the stream: not sent (every device: live from now)
    const s = await stream('', { cookie: session.cookie });
    expect(s.status).to.equal(200);
    expect(s.headers.get('content-type')).to.match(/^text\/event-stream/);
    for (let i = 0; i < 2; i++) await publish(a, 1, i);
    await publish(b, 1, 50);
    await publishEvent(t.redis, a, 'session.status', { deviceId: a, status: 'connected' });
    const got = parsed(await s.waitFor(4));
    // In order per device (devices are separate logs: no order between them).
    const of = (d: string) => got.filter((e) => e.deviceId === d).map((e) => `${e.type}:${e.data.n ?? '-'}`);
    expect(of(a)).to.deep.equal(['message.read:0', 'message.read:1', 'session.status:-']);
    expect(of(b)).to.deep.equal(['message.read:50']);
    expect(got.every((e) => e.data.deviceId === e.deviceId)).to.equal(true);
  });

  it('When one device is followed and the stream resumes with Last-Event-ID, then every event after it comes once, in order', async () => {
    const deviceId = freshDeviceId();
    const s = await stream(`device=${deviceId}&types=message.read`, {
      authorization: `Bearer ${ADMIN_API_TOKEN}`,
    });
    await publish(freshDeviceId(), 1); // another device: never on this stream
    await publish(deviceId, 2);
    const seen = await s.waitFor(2);
    s.close();
    for (let i = 0; i < 120; i++) await publish(deviceId, 1, 100 + i);
    const resumed = await stream(`device=${deviceId}`, {
      authorization: `Bearer ${ADMIN_API_TOKEN}`,
      'last-event-id': seen.at(-1)!.id!,
    });
    const all = parsed(await resumed.waitFor(120));
    expect(all.map((e) => e.data.n)).to.deep.equal(Array.from({ length: 120 }, (_, i) => 100 + i));
    expect(all.every((e) => e.deviceId === deviceId)).to.equal(true);
  });

  it('When a session holds its share of streams, then one more is 429; a bad device or cursor is 400', async () => {
    const session = await signIn(t);
    await stream('', { cookie: session.cookie });
    await stream('', { cookie: session.cookie });
    const over = await fetch(url, { headers: { cookie: session.cookie } });
    expect(over.status).to.equal(429);
    expect(await over.json()).to.deep.equal({ success: false, error: ERRORS.tooManyEventStreams });
    // Another session has its own share.
    const other = await signIn(t);
    expect((await stream('', { cookie: other.cookie })).status).to.equal(200);
    const badDevice = await fetch(`${url}?device=Not%20a%20device`, { headers: { cookie: other.cookie } });
    expect(badDevice.status).to.equal(400);
    const badCursor = await fetch(`${url}?device=d1`, {
      headers: { cookie: other.cookie, 'last-event-id': 'x' },
    });
    expect(badCursor.status).to.equal(400);
  });
});

const PASSWORD = 'event log admin password 7';

interface LoggedEvent {
  cursor: string;
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}
interface Attempt {
  at: string;
  eventId: string;
  type: string;
  outcome: string;
  attempt: number;
  status?: number;
  error?: string;
}
interface Outlets {
  webhook: {
    endpoint: { url: string; secret?: string } | null;
    lastDelivery?: Attempt;
    lastFailure?: Attempt;
    waiting: number;
    retries: { count: number; nextDueAt?: string };
    exhausted: number;
    retryNow?: { at: string; count: number };
  };
  brokers: Record<'rabbitmq' | 'nats' | 'sqs', { startedAt?: string; failures: number }>;
}
type Answer<T> = { status: number; body: { success: boolean; data: T; error?: string } };

describe("Admin API: a device's event log and its ways out (whole stack with the notifier, a real webhook receiver)", function () {
  this.timeout(120_000);
  const stack = useStack({
    notifier: true,
    env: {
      ADMIN_PASSWORD: PASSWORD,
      ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
      // A failed delivery waits two minutes for its retry: only "retry now" brings it within the test.
      WEBHOOK_RETRY_BASE_MS: '120000',
      WEBHOOK_RETRY_MAX_MS: '240000',
    },
  });
  let receiver: WebhookReceiver | undefined;
  let session: { cookie: string; csrf: string };
  after(async () => receiver?.close());

  const admin = async <T>(
    method: string,
    path: string,
    opts: { csrf?: boolean } = {},
  ): Promise<Answer<T>> => {
    const res = await fetch(`${stack().apiUrl}/api/admin/v1${path}`, {
      method,
      headers: {
        cookie: session.cookie,
        ...(opts.csrf === false ? {} : { 'x-csrf-token': session.csrf }),
      },
    });
    return { status: res.status, body: (await res.json()) as Answer<T>['body'] };
  };
  const device = () => `/devices/${stack().deviceId}`;

  before(async () => {
    const res = await fetch(`${stack().apiUrl}/api/admin/v1/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ password: PASSWORD }),
    });
    expect(res.status).to.equal(200);
    const body = (await res.json()) as { csrfToken: string };
    session = { cookie: (res.headers.get('set-cookie') ?? '').split(';')[0]!, csrf: body.csrfToken };
  });

  it('When the endpoint refuses the events, then the admin route reports the failure and the waiting retries; "retry now" delivers them at once with the same webhook-ids', async () => {
    const none = await admin<Outlets>('GET', `${device()}/event-outlets`);
    expect(none.status).to.equal(200);
    expect(none.body.data.webhook).to.deep.include({ endpoint: null, waiting: 0, exhausted: 0 });
    expect((await admin('POST', `${device()}/webhook/retry-now`)).status).to.equal(404);

    receiver = await WebhookReceiver.startFor(stack());
    let refusing = true;
    receiver.respond = () => (refusing ? 500 : 204);
    const linkedAt = Date.now();
    // Linking emits session.status connecting, then connected: both refused.
    await stack().linkByQr('15550610001', 'Event Log Account');
    await waitFor(
      async () =>
        (await admin<Outlets>('GET', `${device()}/event-outlets`)).body.data.webhook.retries.count >= 2,
      { timeoutMs: 30_000, what: 'both events waiting for a retry' },
    );
    const refused = receiver.deliveries.map((d) => d.id);
    const failing = (await admin<Outlets>('GET', `${device()}/event-outlets`)).body.data.webhook;
    expect(failing.endpoint).to.deep.include({ url: receiver.url });
    expect(failing.endpoint).not.to.have.property('secret');
    expect(failing.lastDelivery).to.equal(undefined);
    expect(failing.lastFailure).to.deep.include({
      status: 500,
      outcome: 'retry',
      attempt: 1,
      error: 'the endpoint answered 500',
    });
    expect(refused).to.include(failing.lastFailure!.eventId);
    // Due two minutes (± 20 %) after the first attempt.
    expect(Date.parse(failing.retries.nextDueAt!)).to.be.above(linkedAt + 90_000);

    // The change needs the session's CSRF token.
    expect((await admin('POST', `${device()}/webhook/retry-now`, { csrf: false })).status).to.equal(403);
    refusing = false;
    // The order they wait in (by due time: a retry's jitter may put a later event first).
    const queued = await stack().redis.zrange(`mgw:{${stack().deviceId}}:webhook:retries`, 0, -1);
    expect([...queued].sort()).to.deep.equal([...refused].sort());
    const asked = Date.now();
    const now = await admin<{ waiting: number; madeDue: number }>('POST', `${device()}/webhook/retry-now`);
    expect(now.status).to.equal(200);
    expect(now.body.data.waiting).to.equal(failing.retries.count);
    // Made due at once, not left to their backoff (two minutes): delivered within the wait, 10 x the
    // time they take (quiet: about a second).
    await waitFor(() => receiver!.accepted().length >= refused.length, {
      timeoutMs: 20_000,
      what: 'the retries delivered',
    });
    expect(Date.now() - asked).to.be.below(20_000); // quiet: 1000 ms
    // The same events, with the ids of the refused attempts, in the order they waited in.
    expect(receiver.accepted().map((d) => d.id)).to.deep.equal(queued);

    await waitFor(
      async () =>
        (await admin<Outlets>('GET', `${device()}/event-outlets`)).body.data.webhook.retries.count === 0,
      { timeoutMs: 10_000, what: 'the retries settled' },
    );
    const after = (await admin<Outlets>('GET', `${device()}/event-outlets`)).body.data.webhook;
    expect(after.lastDelivery).to.deep.include({ status: 204, outcome: 'delivered', attempt: 2 });
    expect(refused).to.include(after.lastDelivery!.eventId);
    expect(after.retryNow?.count).to.equal(refused.length);
    expect(after.exhausted).to.equal(0);
    // No broker on this stack: no transport ever ran.
    const brokers = (await admin<Outlets>('GET', `${device()}/event-outlets`)).body.data.brokers;
    expect(brokers.rabbitmq).to.deep.equal({ failures: 0 });
    expect(brokers.nats).to.deep.equal({ failures: 0 });
    expect(brokers.sqs).to.deep.equal({ failures: 0 });
    const settings = await admin<Record<string, { enabled: boolean }>>('GET', `${device()}/events/brokers`);
    expect(settings.body.data).to.deep.equal({
      rabbitmq: { enabled: true },
      nats: { enabled: true },
      sqs: { enabled: false },
    });
  });

  it('When the log is read newest first a page at a time, then the pages are the public GET /events read backwards, and a type filter and bad cursors behave', async () => {
    const pub = await stack().api<{ data: { events: LoggedEvent[] } }>('GET', '/events?limit=1000');
    const all = pub.body.data.events;
    expect(all.length).to.be.at.least(2);
    // The admin route over the public use case answers what the token's own read answers.
    const same = await admin<{ events: LoggedEvent[] }>('GET', `${device()}/events?limit=1000`);
    expect(same.body.data.events).to.deep.equal(all);

    const seen: LoggedEvent[] = [];
    let before: string | null = null;
    for (let i = 0; i < all.length + 1; i++) {
      const q: string = before ? `&before=${before}` : '';
      const page = await admin<{ events: LoggedEvent[]; olderCursor: string | null }>(
        'GET',
        `${device()}/events/recent?limit=1${q}`,
      );
      expect(page.status).to.equal(200);
      seen.push(...page.body.data.events);
      before = page.body.data.olderCursor;
      if (!before) break;
    }
    expect(seen.map((e) => e.cursor)).to.deep.equal(all.map((e) => e.cursor).reverse());

    const connected = await admin<{ events: LoggedEvent[] }>(
      'GET',
      `${device()}/events/recent?types=session.status&limit=100`,
    );
    expect(connected.body.data.events.every((e) => e.type === 'session.status')).to.equal(true);
    expect(connected.body.data.events[0]!.data).to.include({ status: 'connected' });

    const bad = await admin('GET', `${device()}/events/recent?before=nope`);
    expect(bad.status).to.equal(400);
    expect(bad.body).to.deep.include({ success: false });
    expect((await admin('GET', `${device()}/events/recent?types=message.nope`)).status).to.equal(400);
    expect((await admin('GET', '/devices/Not_A_Device!/events/recent')).status).to.equal(400);
    const anon = await fetch(`${stack().apiUrl}/api/admin/v1${device()}/events/recent`);
    expect(anon.status).to.equal(401);
  });
});
