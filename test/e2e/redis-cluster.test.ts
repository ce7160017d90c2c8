/**
 * The gateway on a real Redis Cluster (3 masters, each with a replica): every service, the token
 * CLI and the test's own client connect through `REDIS_CLUSTER_NODES` only. The core flows run
 * through the real Baileys client against the simulator — link, an inbound attachment downloaded,
 * list send, OTP, a sender killed mid-list, the device's master killed mid-list (its replica
 * promoted), disconnect — in one stack, one cluster, in this order.
 */
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { ERRORS, keys, sendQueueName, BULL_PREFIX, CONNECTION_QUEUE } from '@mgw/contracts';
import { keySlot, useStack, waitFor } from '@mgw/testing';

interface Lease {
  owner: string;
  epoch: number;
}
type MessageRecord = Record<string, string>;

describe('e2e: the gateway on a Redis Cluster of 3 masters with replicas (real services, simulator)', function () {
  this.timeout(180_000);
  // The simulator's media host is on loopback: the senders' outbound guard must let them download.
  const stack = useStack(
    { senders: 2, redisCluster: { replicasPerMaster: 1 }, env: { ALLOWED_PRIVATE_HOSTS: '127.0.0.1' } },
    80,
  );
  const account = '15550900001';
  const contact = '15550900002';
  /** The inbound document's message id (the download test sets it; the last test asks again). */
  let documentId = '';

  const alive = () =>
    stack()
      .senders()
      .filter((p) => p.child.signalCode === null);
  const holderOf = (l: Lease) => alive().find((p) => l.owner.includes(`:${p.child.pid}:`));
  async function lease(): Promise<Lease | undefined> {
    const raw = await stack().redis.get(keys.lease(stack().deviceId));
    return raw ? (JSON.parse(raw) as Lease) : undefined;
  }
  /** The records; one the API cannot read now (503: its slot is failing over) reads as queued. */
  async function records(ids: string[]): Promise<MessageRecord[]> {
    return Promise.all(
      ids.map(async (id) => {
        const res = await stack().api<{ data: MessageRecord }>('GET', `/messages/${id}`);
        expect(res.status, JSON.stringify(res.body)).to.be.oneOf([200, 503]);
        return res.status === 200 ? res.body.data : { status: 'queued' };
      }),
    );
  }
  /** Waits until no message is queued; returns the records and the copies the simulator counted. */
  async function settle(recipients: string[], ids: string[], what: string) {
    let recs: MessageRecord[] = [];
    await waitFor(async () => (recs = await records(ids)).every((r) => r.status !== 'queued'), {
      timeoutMs: 60_000,
      intervalMs: 500,
      what,
    });
    let copies = 0;
    for (let i = 0; i < recipients.length; i++) {
      const inbox = await stack().inbox(recipients[i]!);
      if (recs[i]!.status === 'failed') {
        // Failed with a reason, and then never a different message on the phone.
        expect(recs[i]!.error, JSON.stringify(recs[i])).to.be.a('string').and.not.equal('');
        expect(inbox.every((m) => m.id === recs[i]!.platformMessageId)).to.equal(true);
        continue;
      }
      expect(recs[i]!.status).to.be.oneOf(['sent', 'delivered', 'read']);
      expect(
        inbox.map((m) => m.id),
        recipients[i],
      ).to.deep.equal([recs[i]!.platformMessageId]);
      copies += inbox[0]!.duplicates ?? 0;
    }
    return { recs, copies, failed: recs.filter((r) => r.status === 'failed') };
  }
  const sendList = async (prefix: string, n: number, text: string) => {
    const recipients = Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(4, '0')}`);
    const res = await stack().api<{ messageIds: string[] }>('POST', '/send', { to: recipients, text });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    return { recipients, ids: res.body.messageIds };
  };

  before(async () => {
    await stack().linkByQr(account, 'Cluster Account');
  });

  it("When a device is linked on the cluster, then its lease, auth state, session and send queue share the device's slot, and its data spreads over the masters", async () => {
    const id = stack().deviceId;
    const slot = keySlot(keys.lease(id));
    for (const key of [
      keys.authCreds(id),
      keys.session(id),
      keys.deviceQueue(id),
      `${BULL_PREFIX}:${sendQueueName(id)}:wait`,
    ])
      expect(keySlot(key), key).to.equal(slot);
    expect(await stack().redis.hget(keys.session(id), 'linked')).to.equal('1');
    expect(await stack().redis.sismember(keys.linkedDevices(), id)).to.equal(1);
    // Token, roster, liveness, the connection queue and the device spread over the masters. Which
    // master the per-token and per-probe keys land on is chance (their names hold a hash), so only
    // the fixed keys' spread is certain: the token index and the device roster lie on different
    // masters, and no hash tag pins everything into one slot.
    const cluster = stack().redis as unknown as { nodes(role: 'master'): Redis[] };
    const masters = cluster.nodes('master');
    const held = await Promise.all(masters.map((n) => n.keys('mgw:*')));
    const ownerOf = (key: string) => held.findIndex((ks) => ks.includes(key));
    expect(ownerOf(keys.tokenIndex()), keys.tokenIndex()).to.be.at.least(0);
    expect(ownerOf(keys.linkedDevices()), keys.linkedDevices()).to.be.at.least(0);
    expect(ownerOf(keys.tokenIndex())).to.not.equal(ownerOf(keys.linkedDevices()));
    const slots = new Set(held.flat().map((k) => keySlot(k)));
    expect(slots.size, JSON.stringify(held)).to.be.at.least(6);
    // The keys CLI scans every master: it finds the device's sealed credentials.
    const status = await stack().runCli('services/api/src/cli/encryption.ts', ['status']);
    expect(status).to.match(/^auth-creds\s+1\s/m);
    expect(status).to.match(/^auth-keys\s+[1-9]\d*\s/m);
  });

  it('When a contact sends a document, then GET /messages/:id/media answers its bytes every time, though the PUBLISH asking for it counts no sender on some master', async () => {
    // Each sender subscribes on one node of six, the API publishes on a random master: one master
    // at least counts 0 listeners, and the route once answered 409 whenever it took that count.
    const masters = (stack().redis as unknown as { nodes(role: 'master'): Redis[] }).nodes('master');
    const listeners = await Promise.all(
      masters.map(async (n) => ((await n.pubsub('NUMSUB', keys.deviceCommands())) as [string, number])[1]),
    );
    expect(listeners, JSON.stringify(listeners)).to.include(0);
    const file = await stack().sendInvoice(contact, account);
    await waitFor(
      async () => {
        const res = await stack().api<{ data?: { messages: MessageRecord[] } }>(
          'GET',
          '/messages?direction=inbound',
        );
        documentId = res.body.data?.messages[0]?.messageId ?? '';
        return documentId !== '';
      },
      { timeoutMs: 20_000, what: 'the document recorded' },
    );
    // Five asks: with the count as the test, at least one would have met a master counting 0
    // with odds of at least 1 - (2/3)^5, about 87%.
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${stack().apiUrl}/api/messenger/v1/messages/${documentId}/media`, {
        headers: { authorization: `Bearer ${stack().token}` },
      });
      expect(res.status, `download ${i + 1}`).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('application/pdf');
      expect(Buffer.from(await res.arrayBuffer()).equals(file)).to.equal(true);
    }
  });

  it('When a list of 40 and an OTP are sent, then each contact gets exactly one message and the OTP answers 200', async () => {
    const { recipients, ids } = await sendList('1555091', 40, 'cluster list');
    const otp = await stack().api<{ data: Record<string, string> }>('POST', '/otp', {
      phone: '15550920001',
      code: '246810',
    });
    expect(otp.status, JSON.stringify(otp.body)).to.equal(200);
    expect(otp.body.data.platformMessageId).to.match(/^3EB0/);
    const { failed, copies } = await settle(recipients, ids, 'the list sent');
    expect(failed).to.deep.equal([]);
    expect(copies).to.equal(0);
    expect((await stack().inbox('15550920001')).map((m) => m.id)).to.deep.equal([
      otp.body.data.platformMessageId,
    ]);
  });

  it('When the sender holding the device is killed with SIGKILL mid-list, then the other takes the device over and every message arrives once', async () => {
    const before = (await lease())!;
    const victim = holderOf(before)!;
    expect(victim, 'the holder').to.not.equal(undefined);
    await stack().redis.hset(keys.deviceSettings(stack().deviceId), 'sendGapMs', '25');
    const { recipients, ids } = await sendList('1555093', 80, 'sender failover');
    await waitFor(async () => (await records(ids)).filter((r) => r.status !== 'queued').length >= 15, {
      what: '15 messages sent',
      intervalMs: 50,
    });
    victim.child.kill('SIGKILL');
    await victim.exited;
    await waitFor(
      async () => {
        const l = await lease();
        return Boolean(l && l.epoch > before.epoch && holderOf(l));
      },
      { timeoutMs: 30_000, what: 'the other sender holds the device' },
    );
    const { failed, copies } = await settle(recipients, ids, 'the list sent by the new holder');
    expect(failed).to.deep.equal([]);
    // Only what was in flight at the kill is written again, with the same WhatsApp id.
    expect(copies).to.be.at.most(8);
    // A second sender again, for the failover below.
    await stack().startService('sender');
  });

  it("When the device's master is killed mid-list and its replica promoted, then every accepted message ends sent once or failed with a reason, and the gateway goes on", async () => {
    const cluster = stack().cluster;
    const victim = await cluster.masterForKey(keys.lease(stack().deviceId));
    const { recipients, ids } = await sendList('1555094', 80, 'master failover');
    await waitFor(async () => (await records(ids)).filter((r) => r.status !== 'queued').length >= 15, {
      what: '15 messages sent',
      intervalMs: 50,
    });
    await cluster.killNode(victim);
    // Meanwhile a request for the device is refused as a storage outage (or, once promoted, taken).
    const during = await stack().api('POST', '/send', { to: '15550940999', text: 'during the failover' });
    expect(during.status, JSON.stringify(during.body)).to.be.oneOf([202, 503]);
    const { newMasterPort, sinceKillMs } = await cluster.waitForFailover(victim);
    expect(newMasterPort).to.not.equal(victim);

    const { failed, copies } = await settle(recipients, ids, 'every list message settled after the failover');
    // What a failover cost in this run (see docs/operations.md, "Redis Cluster"): printed, bounded below.
    console.log(
      `      (/send during the outage: ${during.status}; failover after ${sinceKillMs} ms; ${failed.length} failed [${[...new Set(failed.map((r) => r.error))].join(', ')}], ${copies} written twice with the same id)`,
    );
    expect(copies).to.be.at.most(8);
    // The gateway serves the device again: a new message goes out.
    await stack().waitForStatus('connected');
    const after = await sendList('1555095', 1, 'after the failover');
    const { failed: lateFailures } = await settle(
      after.recipients,
      after.ids,
      'a message after the failover',
    );
    expect(lateFailures).to.deep.equal([]);
  });

  it('When the device is disconnected, then it is logged out, off the roster, and its session no longer says linked', async () => {
    const res = await stack().api('POST', '/disconnect');
    if (res.status !== 200) {
      // Seen once in 24 loaded runs (a 504, the connection service silent): say where it stood.
      const active = await stack().redis.llen(`${BULL_PREFIX}:${CONNECTION_QUEUE}:active`);
      const lines = stack()
        .processes.filter((p) => p.name.startsWith('connection'))
        .flatMap((p) => p.output.filter((l) => l.includes('"action":"disconnect"')));
      expect.fail(
        `${res.status} ${JSON.stringify(res.body)}; connection jobs active: ${active}; the connection ` +
          `service's lines of the request:\n${lines.join('\n') || '(none: it never took it up)'}`,
      );
    }
    await stack().waitForStatus('disconnected');
    expect(await stack().redis.sismember(keys.linkedDevices(), stack().deviceId)).to.equal(0);
    expect(await stack().redis.hget(keys.session(stack().deviceId), 'linked')).to.equal(null);
    const refused = await stack().api('POST', '/send', { to: '15550960001', text: 'nobody home' });
    expect(refused.status).to.equal(409);
  });

  it('When no sender holds the device any more, then GET /messages/:id/media answers 409 at once', async () => {
    expect(documentId, 'the document of the download test').to.not.equal('');
    await waitFor(async () => !(await lease()), { what: 'the lease released' });
    const started = Date.now();
    const res = await stack().api('GET', `/messages/${documentId}/media`);
    expect(res.status, JSON.stringify(res.body)).to.equal(409);
    expect(res.body).to.include({ error: ERRORS.noDevice });
    // Without asking anyone (a holder's answer is waited for up to 15 s): quiet: 150 ms.
    expect(Date.now() - started).to.be.below(10_000);
  });
});
