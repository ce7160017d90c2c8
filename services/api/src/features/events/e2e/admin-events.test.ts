import { expect } from 'chai';
import { ERRORS } from '@mgw/contracts';
import { publishEvent } from '@mgw/store';
import { freshDeviceId, type TestApi } from '../../../../test/helpers/api.js';
import { ADMIN_API_TOKEN, signIn, startAdminApi } from '../../../../test/helpers/admin.js';
import { openSse, type Sse, type SseEvent } from '../../../../test/helpers/sse.js';

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
