import { expect } from 'chai';
import { WebhookReceiver, useStack, waitFor } from '@mgw/testing';

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
    await waitFor(() => receiver!.accepted().length >= refused.length, {
      timeoutMs: 20_000,
      what: 'the retries delivered',
    });
    expect(Date.now() - asked).to.be.below(20_000);
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
