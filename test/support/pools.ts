/**
 * Test support for pools against a real stack: linked devices, a pool and its token, a pooled
 * list's end and records, each recipient's copy — and issue 51's fault, a send attempt that claimed
 * its message and then found the device's socket closed (it never reached the socket).
 */
import { expect } from 'chai';
import { waitFor, type Stack } from '@mgw/testing';

/** A linked device of a test: its id, its API token, its account's phone number. */
export interface Member {
  deviceId: string;
  token: string;
  phone: string;
}

/** Links `deviceId` as `phone` by QR (the simulator's phone scans it) with a token of its own. */
export async function linkDevice(stack: Stack, deviceId: string, phone: string): Promise<Member> {
  const token = await stack.createToken(deviceId);
  await stack.linkByQr(phone, `Test ${deviceId}`, token);
  return { deviceId, token, phone };
}

/** `n` phone numbers: `prefix` and a 4-digit count. */
export const numbers = (prefix: string, n: number): string[] =>
  Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(4, '0')}`);

/** Creates the pool `poolId` of `members` (admin API) and a token that sends through it; answers the token. */
export async function createPool(
  stack: Stack,
  adminToken: string,
  poolId: string,
  members: Member[],
): Promise<string> {
  const created = await stack.adminApi(adminToken, 'POST', '/pools', {
    id: poolId,
    name: `Pool ${poolId}`,
    devices: members.map((m) => m.deviceId),
  });
  expect(created.status, JSON.stringify(created.body)).to.equal(201);
  const token = await stack.adminApi<{ value: string }>(adminToken, 'POST', '/tokens', {
    name: `sender of ${poolId}`,
    poolId,
  });
  expect(token.status, JSON.stringify(token.body)).to.equal(201);
  return token.body.value;
}

/** A list's counts as `GET /batches/:batchId` answers them, with each device's part. */
export interface ListCounts {
  counts: Record<string, number>;
  devices: { deviceId: string; counts: Record<string, number> }[];
}

export async function listCounts(stack: Stack, batchId: string, token: string): Promise<ListCounts> {
  return (await stack.api<{ data: ListCounts }>('GET', `/batches/${batchId}`, undefined, token)).body.data;
}

/** How many of `counts` left: sent, delivered or read (the phones ack within a second). */
export const sentOf = (counts: Record<string, number>): number =>
  (counts.sent ?? 0) + (counts.delivered ?? 0) + (counts.read ?? 0);

/** What one device of the pool sent of the list so far (sent, delivered or read). */
export async function sentByDevice(stack: Stack, batchId: string, token: string, deviceId: string) {
  const part = (await listCounts(stack, batchId, token)).devices.find((d) => d.deviceId === deviceId);
  return sentOf(part?.counts ?? {});
}

/** Sends `text` to `recipients` as one list through `token` (202); its batch id and message ids. */
export async function sendList(
  stack: Stack,
  token: string,
  recipients: string[],
  text: string,
): Promise<{ batchId: string; ids: string[] }> {
  const res = await stack.api<{ messageId: string; messageIds: string[] }>(
    'POST',
    '/send',
    { to: recipients, text },
    token,
  );
  expect(res.status, JSON.stringify(res.body)).to.equal(202);
  return { batchId: res.body.messageId, ids: res.body.messageIds };
}

/** Waits until none of the list waits any more (queued or scheduled). */
export async function waitForListDone(stack: Stack, batchId: string, token: string, timeoutMs: number) {
  await waitFor(
    async () => {
      const { counts } = await listCounts(stack, batchId, token);
      return (counts.queued ?? 0) + (counts.scheduled ?? 0) === 0;
    },
    { timeoutMs, intervalMs: 500, what: `the list ${batchId} done` },
  );
}

/** Each message's record through `token` (a pool token reads it on the device that holds it now). */
export function recordsOf<R = Record<string, unknown>>(
  stack: Stack,
  ids: string[],
  token: string,
): Promise<R[]> {
  return Promise.all(
    ids.map(
      async (id) => (await stack.api<{ data: R }>('GET', `/messages/${id}`, undefined, token)).body.data,
    ),
  );
}

/**
 * Every recipient got its message at most once, and each one whose record did not fail exactly once:
 * the copy its record names (a copy still being decrypted is waited for, 10 s).
 */
export async function expectEachGotItOnce(
  stack: Stack,
  recipients: string[],
  records: Record<string, unknown>[],
) {
  for (const [i, phone] of recipients.entries()) {
    const record = records[i]!;
    const failed = record.status === 'failed';
    if (!failed)
      await waitFor(async () => (await stack.inbox(phone)).length > 0, {
        timeoutMs: 10_000,
        what: `${phone} reads its copy`,
      }).catch(() => undefined);
    const inbox = await stack.inbox(phone);
    const said = `${phone} got ${inbox.length} messages: ${JSON.stringify(record)}`;
    if (failed) {
      expect(inbox.length, said).to.be.at.most(1);
      continue;
    }
    expect(inbox.length, said).to.equal(1);
    expect(inbox[0]!.id).to.equal(record.platformMessageId);
  }
}

/**
 * Whether a sender's log line says an attempt was retried after its claim found the socket closed:
 * the socket was not open when the message itself was to be written (MessageSender.send; the same
 * error from a number lookup comes before the claim), or it closed before the message's frame.
 */
function unsentAfterClaim(line: string): { messageId: string } | undefined {
  if (!line.includes('will retry')) return undefined;
  const entry = JSON.parse(line) as { messageId: string; err?: { message?: string; stack?: string } };
  const { message = '', stack = '' } = entry.err ?? {};
  const afterClaim =
    message === 'the socket closed before the message was written' ||
    (message === 'the device socket is not open' && /MessageSender\.send \(/.test(stack));
  return afterClaim ? entry : undefined;
}

/** The attempts of `deviceId` its sender retried after their claim found the socket closed. */
export function unsentAttempts(stack: Stack, deviceId: string): { messageId: string }[] {
  return stack.processes
    .filter((p) => p.name.startsWith('sender'))
    .flatMap((p) => p.output)
    .filter((l) => l.includes(deviceId))
    .flatMap((l) => unsentAfterClaim(l) ?? []);
}

/**
 * Drops the device's socket, its logins refused (it stays down), until one of its messages was
 * claimed and then found the socket closed ("will retry"); between tries the device comes back and
 * sends one more (`sentSoFar` counts its sends). Answers that message's id. The logins stay
 * refused (`DELETE /faults` of the simulator ends that, and every other fault).
 */
export async function dropUntilUnsentAttempt(stack: Stack, member: Member, sentSoFar: () => Promise<number>) {
  for (let tries = 1; tries <= 8; tries++) {
    const seen = unsentAttempts(stack, member.deviceId).length;
    await stack.simApi('POST', '/faults/refuse-login', { phone: member.phone, reason: 503 });
    await stack.simApi('POST', '/faults/drop', { phone: member.phone });
    let found: { messageId: string } | undefined;
    await waitFor(async () => (found = unsentAttempts(stack, member.deviceId)[seen]) !== undefined, {
      timeoutMs: 6_000,
      intervalMs: 100,
      what: 'an attempt that found the socket closed after its claim',
    }).catch(() => undefined);
    if (found) return found.messageId;
    // The drop came while no message waited for its turn: let it reconnect and send one more.
    await stack.simApi('DELETE', '/faults');
    const before = await sentSoFar();
    await waitFor(async () => (await sentSoFar()) > before, {
      timeoutMs: 60_000,
      intervalMs: 200,
      what: `${member.deviceId} back and sending`,
    });
  }
  throw new Error(`no attempt of ${member.deviceId} found its socket closed after its claim in 8 tries`);
}
