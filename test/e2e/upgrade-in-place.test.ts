/**
 * An upgrade in place, as an SRE rolls one over live data: the base release
 * (`UPGRADE_BASE_COMMIT`, built from the repository's history) links a device and queues a list —
 * part sent, part waiting for its pacing turn, part held by the first-contact cap, part scheduled
 * with `sendAt` — and is stopped gracefully (SIGTERM) mid-list; this checkout's services then start
 * on the same Redis with the same encryption key and the same settings. The device stays linked
 * (the old services' auth state is read by the new code), the old API token still works, and every
 * message ends sent exactly once (the simulator's inboxes count copies) or failed with a reason;
 * none is left queued or scheduled. The simulator is this checkout's in both phases: it is the
 * WhatsApp side, which an upgrade of the gateway does not touch.
 *
 * The base is the release before workspaces (issue 70, docs/workspaces.md "Upgrading an install
 * from before workspaces"): what it holds becomes the workspace `default` with nothing to migrate.
 * While the list is still going, the operator (an admin token from the token CLI) finds `default`
 * listing the device, the old device token works on the contract's paths and under the device's
 * path prefix, and a workspace token minted for `default` after the upgrade reads the device's
 * status and its messages — those the old release sent too — through the prefix.
 */
import { expect } from 'chai';
import {
  buildPreviousVersion,
  REPO_ROOT,
  Stack,
  UPGRADE_BASE_COMMIT,
  waitFor,
  type PreviousVersion,
  type ServiceName,
  reportFailedTest,
} from '@mgw/testing';

type MessageRecord = {
  messageId?: string;
  status: string;
  platformMessageId?: string;
  error?: string;
  sentAt?: string;
  sendAt?: string;
  held?: { reason: string; until: string };
};

/** The cap window: short, so the messages the cap holds go in the next one, seconds later. */
const WINDOW_MS = 20_000;
/** The send policy of both phases (an upgrade keeps the settings). */
const POLICY = {
  SEND_MIN_GAP_MS: '500',
  SEND_GAP_JITTER_MS: '0',
  SEND_FIRST_CONTACT_CAP: '2',
  SEND_OTP_RESERVE: '0',
  SEND_CAP_WINDOW_MS: String(WINDOW_MS),
};
/**
 * The install's settings, the same in both phases: the send policy, and a dashboard password (the
 * admin API exists only with one), under which the operator mints admin tokens with the token CLI.
 */
const SETTINGS = { ...POLICY, ADMIN_PASSWORD: 'upgrade-dashboard-password' };
const ACCOUNT = '15550990001';
/** Numbers that never wrote to the account: first contacts, 2 of which the cap lets through. */
const STRANGERS = ['15550991001', '15550991002', '15550991003', '15550991004'];
/** Contacts who wrote first (no first contacts): the list's paced part. */
const FRIENDS = Array.from({ length: 16 }, (_, i) => `155509920${String(i).padStart(2, '0')}`);
/** Friends the scheduled request goes to. */
const SCHEDULED = Array.from({ length: 4 }, (_, i) => `155509930${String(i).padStart(2, '0')}`);
/** A number not on WhatsApp, found so by a contact check of the old code (its contact cache). */
const OFF_WHATSAPP = '15550994000';
const SERVICES: ServiceName[] = ['api', 'connection', 'sender'];

describe(`e2e: an upgrade in place from ${UPGRADE_BASE_COMMIT} — the old release queues a list, this code finishes it on the same Redis (real services, simulator)`, function () {
  this.timeout(240_000);
  let base: PreviousVersion;
  let stack: Stack | undefined;

  before(async function () {
    // A cold build (npm ci from the warm cache, then the build) on a loaded machine.
    this.timeout(900_000);
    const started = Date.now();
    base = await buildPreviousVersion(UPGRADE_BASE_COMMIT, (line) => console.log(`    ${line}`));
    console.log(
      `    upgrade base ${base.name} ${base.cached ? 'from the cache' : 'built'} in ${Date.now() - started} ms: ${base.root}`,
    );
    stack = await Stack.start({ serviceRoot: base.root, env: SETTINGS });
  });
  after(async () => {
    await stack?.stop();
  });
  afterEach(function () {
    reportFailedTest(this.currentTest, stack);
  });

  const s = () => stack!;
  /**
   * The messages' records; one the API cannot answer reads `unreadable` (with the answer). By the
   * stack's device token on the contract's path, or by `via.token` under `via.prefix`
   * (`/devices/{deviceId}`).
   */
  async function records(
    ids: string[],
    via: { token?: string; prefix?: string } = {},
  ): Promise<MessageRecord[]> {
    return Promise.all(
      ids.map(async (id) => {
        const res = await s().api<{ data: MessageRecord; error?: string }>(
          'GET',
          `${via.prefix ?? ''}/messages/${id}`,
          undefined,
          via.token,
        );
        return res.status === 200
          ? res.body.data
          : { status: 'unreadable', error: `${res.status} ${res.body.error}` };
      }),
    );
  }
  const isSent = (r: MessageRecord) => ['sent', 'delivered', 'read'].includes(r.status);
  const isPending = (r: MessageRecord) => ['queued', 'scheduled', 'unreadable'].includes(r.status);
  const isHeld = (r: MessageRecord) => r.status === 'queued' && r.held?.reason === 'first_contact_cap';
  /** Waits until the current cap window has at least `ms` left. */
  async function windowWithRoom(ms: number): Promise<void> {
    const left = WINDOW_MS - (Date.now() % WINDOW_MS);
    if (left < ms) await new Promise((r) => setTimeout(r, left + 50));
  }

  it('When the old release is stopped mid-list (sent, queued, held by the first-contact cap, scheduled) and this code starts on its Redis, then the device stays linked and every message is sent exactly once or failed with a reason, none left queued', async () => {
    // --- the old release: link, learn the contacts, queue the list
    await s().linkByQr(ACCOUNT, 'Upgrade Account');
    await s().simApi('POST', '/contacts', { phone: OFF_WHATSAPP, onWhatsApp: false });
    const check = await s().api<{ data: { results: { onWhatsApp: boolean }[] } }>('POST', '/contacts/check', {
      phones: [OFF_WHATSAPP],
    });
    expect(check.body.data.results[0]!.onWhatsApp, JSON.stringify(check.body)).to.equal(false);
    for (const phone of [...FRIENDS, ...SCHEDULED]) {
      await s().simApi('POST', `/contacts/${phone}/send`, { to: ACCOUNT, text: 'hi' });
    }
    await waitFor(
      async () => {
        const res = await s().api<{ data: { messages: unknown[] } }>(
          'GET',
          '/messages?direction=inbound&limit=100',
        );
        return res.body.data.messages.length === FRIENDS.length + SCHEDULED.length;
      },
      { timeoutMs: 30_000, what: 'the friends’ messages received' },
    );
    // The list's held part must still be held when the old release stops: start it early in a window.
    await windowWithRoom(13_000);
    const listTo = [...STRANGERS, ...FRIENDS, OFF_WHATSAPP];
    const list = await s().api<{ messageIds: string[] }>('POST', '/send', { to: listTo, text: 'upgrade' });
    expect(list.status, JSON.stringify(list.body)).to.equal(202);
    const sendAt = new Date(Date.now() + 12_000).toISOString();
    const later = await s().api<{ messageIds: string[] }>('POST', '/send', {
      to: SCHEDULED,
      text: 'upgrade, scheduled',
      sendAt,
    });
    expect(later.status, JSON.stringify(later.body)).to.equal(202);
    const ids = [...list.body.messageIds, ...later.body.messageIds];
    const recipients = [...listTo, ...SCHEDULED];

    // Mid-list: some sent, some held by the cap, the rest waiting for their turn or their time.
    let atStop: MessageRecord[] = [];
    await waitFor(
      async () => {
        atStop = await records(ids);
        return atStop.filter(isSent).length >= 5 && atStop.filter(isHeld).length >= 2;
      },
      { timeoutMs: 30_000, intervalMs: 200, what: 'the old release mid-list' },
    );
    const old = s().processes.filter((p) => p.child.exitCode === null);
    const stoppedAt = Date.now();
    await Promise.all(
      old.map(async (p) => {
        p.child.kill('SIGTERM');
        const late = setTimeout(() => p.child.kill('SIGKILL'), 20_000);
        await p.exited;
        clearTimeout(late);
      }),
    );
    expect(
      old.map((p) => [p.name, p.child.exitCode]),
      'the old services stop gracefully',
    ).to.deep.equal(old.map((p) => [p.name, 0]));
    const phase1 = {
      sent: atStop.filter(isSent).length,
      held: atStop.filter(isHeld).length,
      queued: atStop.filter((r) => r.status === 'queued' && !r.held).length,
      scheduled: atStop.filter((r) => r.status === 'scheduled').length,
    };
    console.log(`    at the stop (${base.name}): ${JSON.stringify(phase1)}`);
    expect(phase1.queued, 'messages waiting for their turn at the stop').to.be.greaterThan(0);
    expect(phase1.scheduled, 'scheduled messages at the stop').to.equal(SCHEDULED.length);

    // --- this code on the same Redis, the same key, the same settings, the old token
    const upgradedAt = Date.now();
    await Promise.all(SERVICES.map((name) => s().startService(name, {}, { root: REPO_ROOT })));
    await s().waitForStatus('connected', 60_000);

    // --- workspaces, while the list is still going: everything the old release held is default's
    const device = s().deviceId;
    const prefix = `/devices/${device}`;
    const admin = (await s().runCli('services/api/src/cli/token.ts', ['admin-create', '--name', 'upgrade']))
      .trim()
      .split('\n')
      .pop()!;
    type DeviceSummary = { deviceId: string; status: string; phone?: string };
    let defaultDevices: DeviceSummary[] = [];
    let lastAnswer = '';
    // The API makes default and lists the linked devices under it at start, without making serving
    // wait for it (until then default may answer 404).
    await waitFor(
      async () => {
        const res = await s().adminApi<{ devices: DeviceSummary[] }>(
          admin,
          'GET',
          '/workspaces/default/devices',
        );
        lastAnswer = `${res.status} ${JSON.stringify(res.body)}`;
        defaultDevices = res.status === 200 ? res.body.devices : [];
        return defaultDevices.some((d) => d.deviceId === device);
      },
      { timeoutMs: 20_000, what: `default listing ${device}` },
    ).catch((err: Error) => {
      throw new Error(`${err.message} (last answer: ${lastAnswer})`);
    });
    expect(
      defaultDevices.map((d) => d.deviceId),
      'default’s devices',
    ).to.deep.equal([device]);
    expect(defaultDevices[0]).to.deep.include({ status: 'connected', phone: ACCOUNT });
    const workspaces = await s().adminApi<{ workspaces: { id: string; status: string; devices: number }[] }>(
      admin,
      'GET',
      '/workspaces',
    );
    expect(workspaces.status, JSON.stringify(workspaces.body)).to.equal(200);
    expect(workspaces.body.workspaces.map((w) => [w.id, w.status, w.devices])).to.deep.equal([
      ['default', 'active', 1],
    ]);
    // The old device token: the contract's paths, its own device's path prefix, no wider reach.
    const oldStatus = await s().api<{ status: string; phone?: string }>('GET', '/status');
    expect(oldStatus.status, JSON.stringify(oldStatus.body)).to.equal(200);
    expect(oldStatus.body).to.deep.include({ status: 'connected', phone: ACCOUNT });
    const oldPrefixed = await s().api<{ status: string; phone?: string }>('GET', `${prefix}/status`);
    expect(oldPrefixed.status, JSON.stringify(oldPrefixed.body)).to.equal(200);
    expect(oldPrefixed.body).to.deep.include({ status: 'connected', phone: ACCOUNT });
    expect((await s().api('GET', '/devices')).status, 'a device token on a workspace route').to.equal(403);
    // A workspace token of default, minted after the upgrade, acts on the device through the prefix.
    const minted = await s().adminApi<{ value: string; token: Record<string, unknown> }>(
      admin,
      'POST',
      '/workspaces/default/tokens',
      { name: 'default owner' },
    );
    expect(minted.status, JSON.stringify(minted.body)).to.equal(201);
    expect(minted.body.token).to.deep.include({ workspaceId: 'default' });
    expect(minted.body.token).to.not.have.property('deviceId');
    const workspace = { token: minted.body.value, prefix };
    const wsStatus = await s().api<{ status: string; phone?: string }>(
      'GET',
      `${prefix}/status`,
      undefined,
      workspace.token,
    );
    expect(wsStatus.status, JSON.stringify(wsStatus.body)).to.equal(200);
    expect(wsStatus.body).to.deep.include({ status: 'connected', phone: ACCOUNT });
    const sentByOld = atStop.findIndex(isSent);
    const [oldMessage] = await records([ids[sentByOld]!], workspace);
    expect(oldMessage, 'a message the old release sent, read by the workspace token').to.deep.include({
      messageId: ids[sentByOld],
      platformMessageId: atStop[sentByOld]!.platformMessageId,
      sentAt: atStop[sentByOld]!.sentAt,
    });
    expect(isSent(oldMessage!), JSON.stringify(oldMessage)).to.equal(true);
    const inFlight = (await records(ids)).filter(isPending).length;
    console.log(
      `    default checked ${Date.now() - upgradedAt} ms after this code started, ` +
        `${inFlight} of ${ids.length} messages still queued or scheduled`,
    );

    let final: MessageRecord[] = [];
    const settled = await waitFor(async () => (final = await records(ids)).every((r) => !isPending(r)), {
      timeoutMs: WINDOW_MS + 40_000,
      intervalMs: 500,
      what: 'no message queued or scheduled',
    }).then(
      () => undefined,
      (err: Error) => err,
    );
    const settledMs = Date.now() - upgradedAt;

    // Each message: sent with exactly one message on the phone (twice: WhatsApp got a second copy),
    // or failed with a reason and nothing on the phone; anything else is lost or wrong.
    const tally = {
      sentOnce: 0,
      twice: 0,
      failed: [] as string[],
      lost: [] as string[],
      wrong: [] as string[],
    };
    for (const [i, r] of final.entries()) {
      const phone = recipients[i]!;
      const inbox = await s().inbox(phone);
      if (isPending(r)) tally.lost.push(`${phone}: ${JSON.stringify(r)}`);
      else if (r.status === 'failed' && r.error && inbox.length === 0) tally.failed.push(r.error);
      else if (!isSent(r) || inbox.length !== 1 || inbox[0]!.id !== r.platformMessageId)
        tally.wrong.push(`${phone}: ${JSON.stringify(r)}, inbox ${JSON.stringify(inbox.map((m) => m.id))}`);
      else if ((inbox[0]!.duplicates ?? 0) > 0) tally.twice++;
      else tally.sentOnce++;
    }
    const reasons = [...new Set(tally.failed)].map(
      (f) => `${f}×${tally.failed.filter((x) => x === f).length}`,
    );
    console.log(
      `    upgrade ${base.name} → HEAD: ${ids.length} messages, sent once ${tally.sentOnce}, ` +
        `failed ${tally.failed.length} (${reasons.join(', ')}), lost ${tally.lost.length}, twice ${tally.twice}` +
        ` — ${settled ? 'not settled' : 'settled'} ${settledMs} ms after this code started`,
    );
    expect(tally.lost, `left queued, scheduled or unreadable (${settled?.message})`).to.deep.equal([]);
    expect(tally.wrong, 'neither sent once nor failed with a reason').to.deep.equal([]);
    expect(tally.twice, 'messages that arrived twice').to.equal(0);
    expect(tally.failed, 'only the number that is not on WhatsApp fails').to.deep.equal(['not_on_whatsapp']);
    // Default's workspace token reads every message as the device token does, old and new (a sent
    // one may be delivered by now), and finds them all in the device's list.
    const pick = (r: MessageRecord) => [isSent(r) ? 'sent' : r.status, r.platformMessageId, r.error];
    expect(
      (await records(ids, workspace)).map(pick),
      'the messages read by the workspace token',
    ).to.deep.equal(final.map(pick));
    const listed = await s().api<{ data: { messages: { messageId: string }[] } }>(
      'GET',
      `${prefix}/messages?direction=outbound&limit=100`,
      undefined,
      workspace.token,
    );
    expect(listed.status, JSON.stringify(listed.body)).to.equal(200);
    expect(listed.body.data.messages.map((m) => m.messageId)).to.have.members(ids);
    // What the old release held or had not yet due went under this code, and not before its time:
    // a held message at the `until` the old release wrote on its record, a scheduled one at sendAt.
    for (const [i, r] of final.entries()) {
      const before = atStop[i]!;
      if (!isHeld(before) && before.status !== 'scheduled') continue;
      const sentAt = Date.parse(r.sentAt!);
      expect(sentAt, `${recipients[i]} sent by this code`).to.be.at.least(stoppedAt);
      const due = before.held ? before.held.until : sendAt;
      expect(sentAt, `${recipients[i]} sent once due (${due})`).to.be.at.least(Date.parse(due));
    }
    // Old data this code could not read would show as errors in its logs.
    const errors = s()
      .processes.filter((p) => p.child.exitCode === null)
      .flatMap((p) => p.output.filter((l) => l.includes('"level":"error"')).map((l) => `${p.name}: ${l}`));
    expect(errors, 'errors logged by this code').to.deep.equal([]);
  });
});
