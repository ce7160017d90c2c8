import { randomBytes } from 'node:crypto';
import { keys } from '@mgw/contracts';
import { markLinked } from '@mgw/store';
import type { Stack } from '@mgw/testing';

export interface Answer {
  status: number;
  body: Record<string, unknown>;
  ms: number;
}

/** One API call against a given API process (the stack may run several). */
export async function callApi(
  apiUrl: string,
  token: string,
  method: string,
  pathAndQuery: string,
): Promise<Answer> {
  const started = Date.now();
  const res = await fetch(`${apiUrl}/api/messenger/v1${pathAndQuery}`, {
    method,
    headers: { authorization: `Bearer ${token}` },
  });
  const body = (await res.json()) as Record<string, unknown>;
  return { status: res.status, body, ms: Date.now() - started };
}

/** How many pairing sockets each connection process opened for a device (from its log). */
export function socketsOpened(stack: Stack, deviceId: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const p of stack.processes.filter((x) => x.name.startsWith('connection'))) {
    counts[p.name] = p.output.filter((line) => {
      if (!line.includes('pairing socket opened')) return false;
      const entry = JSON.parse(line) as { message?: string; deviceId?: string };
      return entry.message === 'pairing socket opened' && entry.deviceId === deviceId;
    }).length;
  }
  return counts;
}

export const total = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

/**
 * A linked device whose owner never answers a logout: credentials that count as linked and a
 * lease held by a sender that is not there (nobody replies to the logout command). A /disconnect
 * of it waits until the connection service gives up.
 */
export async function stuckDevice(stack: Stack, deviceId: string, holdMs = 120_000): Promise<void> {
  const bytes = randomBytes(8).toString('base64');
  await stack.redis.set(
    keys.authCreds(deviceId),
    JSON.stringify({
      me: { id: '15550009999:3@s.whatsapp.net' },
      account: { details: bytes, accountSignature: bytes },
    }),
  );
  await markLinked(stack.redis, deviceId);
  const epoch = await stack.redis.incr(keys.leaseEpoch(deviceId));
  await stack.redis.set(
    keys.lease(deviceId),
    JSON.stringify({ owner: 'sender:unresponsive', epoch }),
    'PX',
    holdMs,
  );
}
