import net, { type AddressInfo } from 'node:net';
import { GraphClient } from '@mgw/cloud';
import { parseAllowedPrivateHosts } from '@mgw/common';
import type { CloudDeviceInput } from '@mgw/contracts';
import { CloudDeviceStore, Encryption } from '@mgw/store';
import { MemoryRedis, MemorySessions } from '../test-support.js';
import type { CloudDeps } from './configure-cloud.js';

/**
 * TEST SUPPORT, not used by the API (left out of the build): the cloud use cases without an API —
 * the real store of cloud devices over an in-memory Redis, and the real Graph client speaking to
 * the Cloud API simulator (libs/cloud-sim) on loopback, which each test starts with SIM_NUMBERS.
 */
export const NUMBER = {
  id: '1001',
  wabaId: '2001',
  displayPhoneNumber: '+1 555-010-0001',
  verifiedName: 'Shop One',
  accessToken: 'token-one',
  appSecret: 'secret-one',
} as const;
export const OTHER_NUMBER = {
  id: '1002',
  wabaId: '2002',
  displayPhoneNumber: '+1 555-010-0002',
  verifiedName: 'Shop Two',
  accessToken: 'token-two',
  appSecret: 'secret-two',
} as const;

/** The body of a PUT /cloud for one of the simulator's numbers. */
export const inputFor = (
  n: typeof NUMBER | typeof OTHER_NUMBER,
  verifyToken = 'verify-me',
): CloudDeviceInput => ({
  phoneNumberId: n.id,
  wabaId: n.wabaId,
  accessToken: n.accessToken,
  appSecret: n.appSecret,
  verifyToken,
});

/** The simulator's numbers (`startCloudSim({ numbers: SIM_NUMBERS })`). */
export const SIM_NUMBERS = [
  { ...NUMBER, messagingLimitTier: 'TIER_1K' as const },
  { ...OTHER_NUMBER, qualityRating: 'YELLOW' as const },
];

/** A Graph client for a Graph API at `baseUrl` on loopback. */
const graphAt = (baseUrl: string) =>
  new GraphClient({ baseUrl, allowList: parseAllowedPrivateHosts('127.0.0.1'), timeoutMs: 5000 });

/**
 * A Graph client whose URL hangs up without an answer (a loopback server that closes every
 * connection): every call is unreachable. `close` stops the server.
 */
export async function unreachableGraph(): Promise<{ graph: GraphClient; close: () => Promise<void> }> {
  const hangsUp = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => hangsUp.listen(0, '127.0.0.1', resolve));
  return {
    graph: graphAt(`http://127.0.0.1:${(hangsUp.address() as AddressInfo).port}`),
    close: () => new Promise((resolve) => hangsUp.close(() => resolve())),
  };
}

/** The use cases' deps over an in-memory Redis, with the Graph API at `graphUrl` (the simulator's). */
export function cloudFixture(graphUrl: string) {
  const redis = new MemoryRedis();
  // The session record's writers are a script: faked (test-support's MemorySessions).
  const sessions = new MemorySessions();
  const cloudDevices = new CloudDeviceStore(redis.client, Encryption.fromEnv(), sessions);
  const graph = graphAt(graphUrl);
  const d: CloudDeps = { redis: redis.client, cloudDevices, graph };
  return { redis, sessions, cloudDevices, graph, d };
}
export type CloudFixture = ReturnType<typeof cloudFixture>;
