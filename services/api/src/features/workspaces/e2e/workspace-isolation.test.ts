import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import net from 'node:net';
import WebSocket from 'ws';
import { startNatsServer, useStack, waitFor, WebhookReceiver, type BrokerServerHandle } from '@mgw/testing';
import { call, markConnected, type TestApi } from '../../../../test/helpers/api.js';
import { adminCall, startAdminApi } from '../../../../test/helpers/admin.js';
import { openSse } from '../../../../test/helpers/sse.js';
import { FEATURES } from '../../mounts.js';
import type { ApiRoute } from '../../../http/route-table.js';

const NOT_FOUND = { success: false, error: 'Device not found' };

/**
 * A WebSocket handshake: 101 and the frames the socket then gets (parsed), or the HTTP answer
 * that refused the upgrade. The token goes as a header, a subprotocol (a browser) or `?token=`.
 */
function openWs(url: string, opts: { headers?: Record<string, string>; protocols?: readonly string[] }) {
  const ws = new WebSocket(url, [...(opts.protocols ?? [])], { headers: { ...opts.headers } });
  const frames: { type: string; data?: Record<string, unknown> }[] = [];
  ws.on('message', (data) => frames.push(JSON.parse(String(data)) as (typeof frames)[number]));
  return new Promise<{ status: number; body?: unknown; ws: WebSocket; frames: typeof frames }>(
    (resolve, reject) => {
      ws.on('error', reject);
      ws.once('open', () => resolve({ status: 101, ws, frames }));
      ws.once('unexpected-response', (_req, res: IncomingMessage) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), ws, frames }));
      });
    },
  );
}

/**
 * The isolation matrix (docs/workspaces.md), taken from the route table itself so that a route
 * added later is in it: every public route that acts on a device, called for workspace B's device
 * with workspace A's token (a workspace token and a device token), answers 404 `Device not found`
 * — never 403 with a name, never B's data — and B's device is untouched. Then A's own routes with
 * B's ids (device, token) answer 404 too, B's event streams refuse A before any stream or upgrade,
 * and B's message, batch and media ids under A's own device answer as ids nobody has.
 */
describe('API: workspace isolation over every route of the table', () => {
  let t: TestApi;
  const ws = () => `iso${randomBytes(4).toString('hex')}`;
  const [a, b] = [ws(), ws()];
  let tokenA: string;
  let deviceA: string;
  let deviceTokenA: string;
  let tokenB: string;
  let deviceB: string;
  let tokenIdB: string;

  const routes = FEATURES.flatMap((f) => f.routes).filter(
    (r): r is ApiRoute => r.surface !== 'admin' && !r.root && r.auth !== 'none',
  );
  /** A route's path with every parameter filled with an id of the right look. */
  const concrete = (path: string) =>
    path.replace(/:(\w+)/g, (_m, name: string) =>
      /number|phone/i.test(name)
        ? '15550009999'
        : /messageId|^id$/.test(name)
          ? '3EB0AAAAAAAAAAAAAAAAAAAA'
          : 'x1',
    );

  before(async () => {
    t = await startAdminApi();
    for (const id of [a, b]) {
      const made = await adminCall(t, '/workspaces', { method: 'POST', json: { id, name: id } });
      expect(made.status).to.equal(201);
    }
    const mint = async (id: string, json: Record<string, unknown> = { name: 'owner' }) =>
      (await adminCall(t, `/workspaces/${id}/tokens`, { method: 'POST', json })).body;
    tokenA = (await mint(a)).value as string;
    const minted = await mint(b);
    tokenB = minted.value as string;
    tokenIdB = (minted.token as { id: string }).id;
    const mine = await call(`${t.api}/devices`, { method: 'POST', token: tokenA });
    deviceA = (mine.body.data as { deviceId: string }).deviceId;
    deviceTokenA = (await mint(a, { name: 'shop', deviceId: deviceA })).value as string;
    deviceB = (
      (await call(`${t.api}/devices`, { method: 'POST', token: tokenB })).body.data as { deviceId: string }
    ).deviceId;
    await markConnected(t.redis, deviceB);
    await markConnected(t.redis, deviceA);
  });
  after(async () => {
    await t.close();
  });

  it("When A's tokens call every device route for B's device, then each answers 404 Device not found and B's device is unchanged", async () => {
    const deviceRoutes = routes.filter((r) => r.scope !== 'workspace');
    expect(deviceRoutes.length, 'the table has its device routes').to.be.greaterThan(70);
    const before = await t.redis.hgetall(`mgw:{${deviceB}}:session`);
    const seen: string[] = [];
    for (const route of deviceRoutes) {
      for (const [who, token] of [
        ['workspace token', tokenA],
        ['device token', deviceTokenA],
      ] as const) {
        const where = `${route.method.toUpperCase()} ${route.path} (${who})`;
        const r = await call(`${t.api}/devices/${deviceB}${concrete(route.path)}`, {
          method: route.method.toUpperCase(),
          token,
          ...(route.method === 'get' || route.body === 'none' ? {} : { json: {} }),
        });
        expect(r.status, where).to.equal(404);
        expect(r.body, where).to.deep.equal({ success: false, error: 'Device not found' });
        seen.push(where);
      }
    }
    expect(seen).to.have.length(deviceRoutes.length * 2);
    expect(await t.redis.hgetall(`mgw:{${deviceB}}:session`), "B's session").to.deep.equal(before);
  });

  it("When A's workspace token names B's ids on its own routes, then B's device and B's token are 404 and B's token still works", async () => {
    expect((await call(`${t.api}/devices/${deviceB}`, { token: tokenA })).status).to.equal(404);
    const list = (await call(`${t.api}/devices`, { token: tokenA })).body.data as { deviceId: string }[];
    expect(list.map((d) => d.deviceId)).to.not.include(deviceB);
    const revoke = await call(`${t.api}/tokens/${tokenIdB}`, { method: 'DELETE', token: tokenA });
    expect(revoke.status).to.equal(404);
    const tokens = (await call(`${t.api}/tokens`, { token: tokenA })).body.data as { id: string }[];
    expect(tokens.map((x) => x.id)).to.not.include(tokenIdB);
    const minted = await call(`${t.api}/tokens`, {
      method: 'POST',
      token: tokenA,
      json: { name: 'steal', deviceId: deviceB },
    });
    expect(minted.status).to.equal(404);
    expect((await call(`${t.api}/devices/${deviceB}/status`, { token: tokenB })).status).to.equal(200);
  });

  it("When A's tokens open B's event streams — pull, SSE and WebSocket, the token in a header, in the query (an EventSource) or as a subprotocol (a browser's WebSocket) — then each is 404 Device not found before any stream or upgrade", async () => {
    const base = `${t.api}/devices/${deviceB}/events`;
    const wsUrl = `${base.replace(/^http/, 'ws')}/ws`;
    for (const [who, token] of [
      ['workspace token', tokenA],
      ['device token', deviceTokenA],
    ] as const) {
      for (const [path, headers] of [
        ['', {}],
        ['/stream', { accept: 'text/event-stream' }],
        ['/stream?after=0-0', { 'last-event-id': '0-0' }],
      ] as const) {
        for (const tokenInQuery of [false, true]) {
          const r = await call(`${base}${path}`, { token, tokenInQuery, headers });
          const where = `GET …/events${path} (${who}, query ${tokenInQuery})`;
          expect([r.status, r.body], where).to.deep.equal([404, NOT_FOUND]);
        }
      }
      for (const [how, url, opts] of [
        ['header', wsUrl, { headers: { authorization: `Bearer ${token}` } }],
        ['subprotocol', wsUrl, { protocols: ['mgw.events.v1', `mgw.bearer.${token}`] }],
        ['query', `${wsUrl}?token=${encodeURIComponent(token)}`, {}],
      ] as const) {
        const r = await openWs(url, opts);
        r.ws.terminate();
        const where = `WebSocket, the token as a ${how} (${who})`;
        expect([r.status, r.body], where).to.deep.equal([404, NOT_FOUND]);
      }
    }
    const open = (await t.services.metrics.eventStreamsOpen.get()).values.reduce((n, v) => n + v.value, 0);
    expect(open, 'streams opened').to.equal(0);
    // B's own token is let in on the same URL: the refusals were A's.
    const own = await openWs(wsUrl, { protocols: ['mgw.events.v1', `mgw.bearer.${tokenB}`] });
    own.ws.terminate();
    expect(own.status).to.equal(101);
  });

  it("When A's tokens name B's message, batch and media ids under A's own device, then each answers as an id nobody has (404), B's records are untouched and A's lists hold none of them", async () => {
    const asB = (path: string, opts: Parameters<typeof call>[1] = {}) =>
      call(`${t.api}/devices/${deviceB}${path}`, { token: tokenB, ...opts });
    const one = await asB('/send', { method: 'POST', json: { to: '15550003001', text: 'B only' } });
    const list = await asB('/send', {
      method: 'POST',
      json: { to: ['15550003002', '15550003003'], text: 'B list' },
    });
    const media = await asB('/media?filename=b.pdf', {
      method: 'POST',
      body: Buffer.from('%PDF-1.4\n% B only\n'),
      headers: { 'content-type': 'application/pdf' },
    });
    expect([one.status, list.status, media.status]).to.deep.equal([202, 202, 201]);
    const b = {
      message: one.body.messageId as string,
      batch: list.body.messageId as string,
      media: (media.body.data as { mediaId: string }).mediaId,
    };
    const nobody = {
      message: randomUUID(),
      batch: randomUUID(),
      media: `med_${randomBytes(16).toString('base64url')}`,
    };
    const records = () =>
      Promise.all(
        [`/messages/${b.message}`, `/batches/${b.batch}`, `/media/${b.media}`].map((p) =>
          asB(p).then((r) => [r.status, r.body]),
        ),
      );
    const before = await records();
    expect(
      before.map((r) => r[0]),
      "B's own ids",
    ).to.deep.equal([200, 200, 200]);

    const probes = (ids: typeof b): [string, string, Record<string, unknown>?][] => [
      ['GET', `/messages/${ids.message}`],
      ['GET', `/messages/${ids.message}/media`],
      ['POST', `/messages/${ids.message}/read`],
      ['GET', `/batches/${ids.batch}`],
      ['POST', `/batches/${ids.batch}/pause`],
      ['POST', `/batches/${ids.batch}/resume`],
      ['POST', `/batches/${ids.batch}/cancel`],
      ['GET', `/media/${ids.media}`],
      ['DELETE', `/media/${ids.media}`],
      ['POST', '/send', { to: '15550003009', attachment: { type: 'document', mediaId: ids.media } }],
      ['POST', '/send', { to: '15550003001', reaction: { messageId: ids.message, emoji: '👍' } }],
      ['POST', '/send', { to: '15550003001', edit: { messageId: ids.message, text: 'mine now' } }],
      ['POST', '/send', { to: '15550003001', delete: { messageId: ids.message } }],
    ];
    const nobodys = probes(nobody);
    for (const [who, token, base] of [
      ['workspace token', tokenA, `${t.api}/devices/${deviceA}`],
      ['device token', deviceTokenA, t.api],
      ['device token naming its device', deviceTokenA, `${t.api}/devices/${deviceA}`],
    ] as const) {
      const ask = ([method, path, json]: ReturnType<typeof probes>[number]) =>
        call(`${base}${path}`, { method, token, ...(json ? { json } : {}) });
      for (const [i, probe] of probes(b).entries()) {
        const where = `${probe[0]} ${probe[1]} ${JSON.stringify(probe[2] ?? '')} (${who})`;
        const [theirs, none] = [await ask(probe), await ask(nobodys[i]!)];
        expect(theirs.status, where).to.equal(404);
        expect(theirs.body, `${where}: as for an id nobody has`).to.deep.equal(none.body);
      }
      for (const path of ['/messages', '/batches', '/events', '/chats']) {
        const page = await call(`${base}${path}`, { token });
        expect(page.status, `${path} (${who})`).to.equal(200);
        const text = JSON.stringify(page.body);
        for (const id of [b.message, b.batch, b.media, deviceB, ...(list.body.messageIds as string[])])
          expect(text, `${path} (${who})`).to.not.include(id);
      }
    }
    expect(await records(), "B's records").to.deep.equal(before);
  });

  it('When a workspace token reuses an Idempotency-Key on two of its devices, then each device gets its own message; a retry on one replays its own', async () => {
    const other = await call(`${t.api}/devices`, { method: 'POST', token: tokenA });
    const deviceA2 = (other.body.data as { deviceId: string }).deviceId;
    await markConnected(t.redis, deviceA2);
    const send = (device: string) =>
      call(`${t.api}/devices/${device}/send`, {
        method: 'POST',
        token: tokenA,
        json: { to: '15550003301', text: 'once per device' },
        headers: { 'idempotency-key': 'order-42' },
      });
    const [first, second] = [await send(deviceA), await send(deviceA2)];
    expect([first.status, second.status]).to.deep.equal([202, 202]);
    expect(second.headers.get('idempotent-replayed')).to.not.equal('true');
    expect(second.body.messageId).to.not.equal(first.body.messageId);
    for (const [device, answer] of [
      [deviceA, first],
      [deviceA2, second],
    ] as const) {
      const path = `${t.api}/devices/${device}/messages/${String(answer.body.messageId)}`;
      expect((await call(path, { token: tokenA })).status, device).to.equal(200);
    }
    const again = await send(deviceA2);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.body.messageId).to.equal(second.body.messageId);
  });
});

/**
 * A core NATS subscriber, the protocol by hand (INFO, CONNECT, SUB, PING/PONG, MSG/HMSG): every
 * message published on `subject` while it listens, with the subject it was published on.
 */
async function natsTap(url: string, subject: string) {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  const got: { subject: string; body: { type: string; data: Record<string, unknown> } }[] = [];
  let buffer = Buffer.alloc(0);
  let subscribed!: () => void;
  const ready = new Promise<void>((resolve) => (subscribed = resolve));
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (let nl = buffer.indexOf('\r\n'); nl >= 0; nl = buffer.indexOf('\r\n')) {
      const parts = buffer.subarray(0, nl).toString().split(' ');
      if (parts[0] === 'MSG' || parts[0] === 'HMSG') {
        // MSG <subject> <sid> [reply-to] <bytes>; HMSG … <header bytes> <total bytes>
        const total = Number(parts.at(-1));
        const headers = parts[0] === 'HMSG' ? Number(parts.at(-2)) : 0;
        if (buffer.length < nl + 2 + total + 2) return;
        const payload = buffer.subarray(nl + 2 + headers, nl + 2 + total).toString();
        got.push({ subject: parts[1]!, body: JSON.parse(payload) as (typeof got)[number]['body'] });
        buffer = buffer.subarray(nl + 2 + total + 2);
      } else {
        if (parts[0] === 'PING') socket.write('PONG\r\n');
        if (parts[0] === 'PONG') subscribed();
        buffer = buffer.subarray(nl + 2);
      }
    }
  });
  socket.write(`CONNECT {"verbose":false,"pedantic":false,"headers":true}\r\nSUB ${subject} 1\r\nPING\r\n`);
  await ready;
  return { got, close: () => socket.destroy() };
}

/**
 * Isolation of what a device's events reach, over the whole stack (the real client against the
 * simulator, the notifier relaying to a real NATS JetStream): while workspace B's device links,
 * sends, is written to and gets a file, workspace A's pull, SSE, WebSocket, webhook and NATS
 * subject get none of it — only A's own events, of which they get every one — and B's own get it.
 */
describe('e2e: workspace isolation of events — pull, SSE, WebSocket, webhook, NATS (real client, simulator)', function () {
  this.timeout(180_000);
  const ADMIN = 'isolation-admin-token-0123456789abcdef';
  const env: Record<string, string> = {
    ADMIN_API_TOKEN: ADMIN,
    ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
    EVENTS_NATS_STREAM: 'MGW_ISOLATION',
    EVENTS_NATS_SUBJECT_PREFIX: 'mgw.iso',
  };
  let nats: BrokerServerHandle;
  let tap: Awaited<ReturnType<typeof natsTap>>;
  // Registered before the stack's: the broker runs, and `env` names it, when the stack starts.
  before(async () => {
    nats = await startNatsServer();
    env.EVENTS_NATS_URL = nats.url;
    tap = await natsTap(nats.url, 'mgw.iso.>');
  });
  const stack = useStack({ allInOne: true, sim: { receiptDelayMs: 20, readDelayMs: 50 }, env });
  const receivers: WebhookReceiver[] = [];
  after(async () => {
    tap?.close();
    await Promise.all(receivers.map((r) => r.close()));
    await nats?.stop();
  });

  /** A workspace made by the operator, its device, a device token, and a webhook receiver on it. */
  const tenant = async (prefix: string) => {
    const id = `${prefix}${randomBytes(3).toString('hex')}`;
    expect((await stack().adminApi(ADMIN, 'POST', '/workspaces', { id, name: id })).status).to.equal(201);
    const minted = await stack().adminApi<{ value: string }>(ADMIN, 'POST', `/workspaces/${id}/tokens`, {
      name: 'owner',
    });
    const owner = minted.body.value;
    const made = await stack().api<{ data: { deviceId: string } }>('POST', '/devices', undefined, owner);
    const device = made.body.data.deviceId;
    const token = await stack().api<{ data: { value: string } }>(
      'POST',
      '/tokens',
      { name: 'device', deviceId: device },
      owner,
    );
    const receiver = await WebhookReceiver.start();
    receivers.push(receiver);
    const hook = await stack().api<{ data: { secret: string } }>(
      'PUT',
      `/devices/${device}/webhook`,
      { url: receiver.url },
      owner,
    );
    expect(hook.status, JSON.stringify(hook.body)).to.equal(200);
    receiver.secrets = [hook.body.data.secret];
    return { owner, device, deviceToken: token.body.data.value, receiver };
  };

  it("When B's device links, sends, is written to and gets a file, then A's pull, SSE, WebSocket, webhook and NATS subject get none of it, B's own get it; A cannot read B's file nor quote B's messages", async () => {
    const [accountA, contactA, accountB, contactB] = [
      '15552720001',
      '15552720011',
      '15552720002',
      '15552720012',
    ];
    for (const phone of [contactA, contactB]) await stack().simApi('POST', '/contacts', { phone });
    const [a, b] = [await tenant('isoa'), await tenant('isob')];
    type Tenant = typeof a;
    type Event = { type: string; data?: Record<string, unknown> };
    const gw = `${stack().apiUrl}/api/messenger/v1`;
    const send = async (t: Tenant, body: Record<string, unknown>) => {
      const sent = await stack().api<{ messageId: string }>(
        'POST',
        `/devices/${t.device}/send`,
        body,
        t.owner,
      );
      expect(sent.status, JSON.stringify(sent.body)).to.equal(202);
      return sent.body.messageId;
    };
    // A's streams as a browser opens them (an EventSource: the token in the query; a WebSocket:
    // the token as a subprotocol); B's SSE beside them, to see B's events go out meanwhile.
    const sseA = await openSse(`${gw}/devices/${a.device}/events/stream?token=${a.owner}`, {});
    const sseB = await openSse(`${gw}/devices/${b.device}/events/stream`, {
      authorization: `Bearer ${b.owner}`,
    });
    const wsA = await openWs(`${gw.replace(/^http/, 'ws')}/devices/${a.device}/events/ws`, {
      protocols: ['mgw.events.v1', `mgw.bearer.${a.owner}`],
    });
    expect([sseA.status, sseB.status, wsA.status]).to.deep.equal([200, 200, 101]);
    try {
      await stack().fastLink(accountA, 'Workspace A', a.deviceToken);
      await stack().fastLink(accountB, 'Workspace B', b.deviceToken);
      const sentB = await send(b, { to: contactB, text: 'for B only' });
      const replyB = `B's contact writes ${randomBytes(4).toString('hex')}`;
      await stack().simApi('POST', `/contacts/${contactB}/send`, { to: accountB, text: replyB });
      const file = await stack().sendInvoice(contactB, accountB);
      for (const [what, type, where] of [
        ["B's message read", 'message.read', (d) => d.messageId === sentB],
        ["B's contact's reply", 'message.received', (d) => d.text === replyB],
        ["B's contact's file", 'message.received', (d) => Boolean(d.attachment)],
      ] as const satisfies [string, string, (d: Record<string, unknown>) => boolean][])
        await waitFor(() => b.receiver.events(type, where).length > 0, { timeoutMs: 30_000, what });
      const received = b.receiver.events('message.received').map((d) => d.body.data.messageId as string);
      const fileId = b.receiver.events('message.received', (d) => Boolean(d.attachment))[0]!.body.data
        .messageId as string;
      await sseB.waitFor(1, 'message.read', 20_000);

      // A's own message goes last: once its events are on A's outlets, any of B's would be there.
      const markA = await send(a, { to: contactA, text: 'for A' });
      const isMark = (e: Event) => e.type === 'message.read' && e.data?.messageId === markA;
      const onNats = (device: string) => tap.got.filter((m) => m.subject.startsWith(`mgw.iso.${device}.`));
      const live = (): Record<string, Event[]> => ({
        SSE: sseA.events.map((e) => ({ type: e.event!, ...(JSON.parse(e.data) as object) })),
        WebSocket: wsA.frames,
        webhook: a.receiver.accepted().map((d) => d.body),
        'NATS subject': onNats(a.device).map((m) => m.body),
      });
      await waitFor(() => Object.values(live()).every((events) => events.some(isMark)), {
        timeoutMs: 30_000,
        what: "A's message read on A's SSE, WebSocket, webhook and NATS subject",
      });
      await new Promise((r) => setTimeout(r, 500));
      const pulled = async (token: string, path: string) =>
        (await stack().api<{ data: { events: Event[] } }>('GET', path, undefined, token)).body.data.events;
      const outlets = {
        ...live(),
        'pull (workspace token)': await pulled(a.owner, `/devices/${a.device}/events?limit=1000`),
        'pull (device token)': await pulled(a.deviceToken, '/events?limit=1000'),
      };
      const secrets = [b.device, sentB, ...received, replyB, accountB, contactB];
      for (const [outlet, events] of Object.entries(outlets)) {
        expect(events.filter(isMark), `${outlet}: A's own message read`).to.have.length(1);
        expect(
          events.map((e) => e.data?.deviceId),
          outlet,
        ).to.deep.equal(events.map(() => a.device));
        const text = JSON.stringify(events);
        for (const secret of secrets) expect(text, `${outlet}: ${secret}`).to.not.include(secret);
      }
      // B's events did go out: on B's stream and on B's subject, and every subject names its device.
      expect(sseB.events.map((e) => e.event)).to.include.members(['message.read', 'message.received']);
      expect(onNats(b.device).map((m) => m.body.data.messageId)).to.include.members([sentB, ...received]);
      for (const m of tap.got)
        expect(m.subject).to.equal(`mgw.iso.${String(m.body.data.deviceId)}.${m.body.type}`);

      // B's file: B downloads it; under A's device B's ids answer as an id nobody has.
      const download = (t: Tenant, id: string) =>
        fetch(`${gw}/devices/${t.device}/messages/${id}/media`, {
          headers: { authorization: `Bearer ${t.owner}` },
        });
      const own = await download(b, fileId);
      expect(own.status).to.equal(200);
      expect(Buffer.from(await own.arrayBuffer()).equals(file)).to.equal(true);
      const nobody = await (await download(a, randomUUID())).json();
      for (const id of [fileId, sentB]) {
        const theirs = await download(a, id);
        expect([theirs.status, await theirs.json()], `A downloads B's ${id}`).to.deep.equal([404, nobody]);
      }
      // A quotes B's messages: accepted (the id is looked up when sent), then failed as unknown.
      for (const quoted of [sentB, received[0]!]) {
        const reply = await send(a, { to: contactA, text: 'quoting B', existingMessageId: quoted });
        const path = `/devices/${a.device}/messages/${reply}`;
        let record: Record<string, unknown> = {};
        await waitFor(
          async () => {
            record = (await stack().api<{ data: typeof record }>('GET', path, undefined, a.owner)).body.data;
            return record.status !== 'queued';
          },
          { timeoutMs: 30_000, what: 'the reply leaves queued' },
        );
        expect(record).to.include({ status: 'failed', error: 'reply_target_not_found' });
      }
    } finally {
      sseA.close();
      sseB.close();
      wsA.ws.terminate();
    }
  });
});
