import { expect } from 'chai';
import { EventSource } from 'eventsource';
import { EVENT_TYPES } from '@mgw/contracts';
import { useStack, waitFor, type Stack } from '@mgw/testing';

interface Envelope {
  id: string;
  type: string;
  timestamp: string;
  data: { messageId?: string };
}
interface Pulled extends Envelope {
  cursor: string;
}
interface Received {
  cursor: string;
  type: string;
  envelope: Envelope;
}

/** Every event of the token's device in its log, oldest first, a page at a time (GET /events). */
async function pullAll(stack: Stack, token: string, after?: string): Promise<Pulled[]> {
  const out: Pulled[] = [];
  let cursor = after;
  for (;;) {
    const query = `limit=50${cursor ? `&after=${cursor}` : ''}`;
    const res = await stack.api<{ data: { events: Pulled[]; nextCursor: string | null } }>(
      'GET',
      `/events?${query}`,
      undefined,
      token,
    );
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    out.push(...res.body.data.events);
    if (res.body.data.events.length === 0 || !res.body.data.nextCursor) return out;
    cursor = res.body.data.nextCursor;
  }
}

describe('e2e: a real EventSource client reads GET /events/stream through a SIGKILLed API and resumes with Last-Event-ID: every event of the window exactly once, in order (real services, simulator)', function () {
  this.timeout(180_000);
  const stack = useStack();
  const sources: EventSource[] = [];
  after(() => sources.forEach((s) => s.close()));

  it('When the API process is killed mid-list and started again, then the client reconnects by itself and receives every event once, in the log order, and the pull API from any of its cursors answers the same tail', async () => {
    const s = stack();
    await s.linkByQr('15550920001', 'Stream resume');
    const token = s.token;
    const url = `${s.apiUrl}/api/messenger/v1/events/stream`;
    // What the client sent on each (re)connect: the resume header a reconnecting EventSource adds.
    const lastEventIds: (string | null)[] = [];
    const received: Received[] = [];
    let opened = 0;
    const source = new EventSource(url, {
      fetch: (input, init) => {
        const headers = new Headers(init?.headers);
        lastEventIds.push(headers.get('last-event-id'));
        headers.set('authorization', `Bearer ${token}`);
        return fetch(input, { ...init, headers });
      },
    });
    sources.push(source);
    source.onopen = () => opened++;
    for (const type of EVENT_TYPES)
      source.addEventListener(type, (e) => {
        received.push({ cursor: e.lastEventId, type, envelope: JSON.parse(e.data) as Envelope });
      });
    await waitFor(() => opened === 1, { timeoutMs: 10_000, what: 'the stream opened' });

    const recipients = Array.from({ length: 20 }, (_, i) => `1555092${String(1000 + i)}`);
    const sent = await s.api<{ messageId: string; messageIds: string[] }>('POST', '/send', {
      to: recipients,
      text: 'a list streamed while the API restarts',
    });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(202);
    await waitFor(() => received.length >= 5, { timeoutMs: 60_000, what: 'the first events streamed' });

    // The API dies mid-list (SIGKILL: no goodbye on the stream) while the sender goes on sending.
    const api = s.processes.find((p) => p.name.startsWith('api') && p.child.exitCode === null)!;
    const port = api.port;
    api.child.kill('SIGKILL');
    await api.exited;
    const beforeRestart = received.length;
    await new Promise((r) => setTimeout(r, 2_000));
    await s.startService('api', { PORT: String(port) });
    s.apiUrl = `http://127.0.0.1:${port}`;

    // The client comes back by itself; the list ends (batch.completed) and every message reads.
    await waitFor(() => received.some((r) => r.type === 'batch.completed'), {
      timeoutMs: 90_000,
      what: 'batch.completed streamed after the restart',
    });
    await waitFor(
      async () => {
        const read = received.filter((r) => r.type === 'message.read').length;
        return read === recipients.length;
      },
      { timeoutMs: 60_000, what: 'every message.read streamed' },
    );

    expect(opened, 'connections opened by the client').to.be.at.least(2);
    // Its reconnect named the last event it had: the resume is by id, not from "now".
    const resumedWith = lastEventIds.slice(1).filter((id): id is string => id !== null);
    expect(resumedWith, 'Last-Event-ID on reconnect').to.not.be.empty;
    expect(received.map((r) => r.cursor)).to.include(resumedWith[0]);
    expect(received.length, 'events after the restart').to.be.greaterThan(beforeRestart);

    // Exactly once and in order: what the client got is the device's log from its first event on.
    const log = await pullAll(s, token);
    const first = log.findIndex((e) => e.cursor === received[0]!.cursor);
    expect(first, 'the first streamed event is in the log').to.be.at.least(0);
    const tail = log.slice(first, first + received.length);
    expect(received.map((r) => r.envelope.id)).to.deep.equal(tail.map((e) => e.id));
    expect(received.map((r) => r.cursor)).to.deep.equal(tail.map((e) => e.cursor));
    expect(new Set(received.map((r) => r.envelope.id)).size).to.equal(received.length);
    // Every message of the list is in it, sent before delivered before read.
    for (const id of sent.body.messageIds) {
      const order = received.filter((r) => r.envelope.data.messageId === id).map((r) => r.type);
      expect(order.slice(0, 1), `events of ${id}`).to.deep.equal(['message.sent']);
      expect(order.indexOf('message.sent')).to.be.lessThan(
        order.includes('message.delivered') ? order.indexOf('message.delivered') : Infinity,
      );
    }

    // The pull API from a cursor in the middle answers exactly what followed it.
    const middle = received[Math.floor(received.length / 2)]!;
    const rest = await pullAll(s, token, middle.cursor);
    const after = received.slice(received.indexOf(middle) + 1);
    expect(rest.slice(0, after.length).map((e) => e.id)).to.deep.equal(after.map((r) => r.envelope.id));
  });
});
