import type { MessageRecord } from '@mgw/contracts';
import { keys } from '@mgw/contracts';
import {
  CloudDeviceStore,
  Encryption,
  type DeviceHealth,
  type InboundRecord,
  type SendingView,
} from '@mgw/store';
import { MemoryRedis, MemorySessions } from '../test-support.js';
import { DeviceDirectory } from './device-directory.js';
import type { DevicesDeps } from './devices.js';

/**
 * TEST SUPPORT, not used by the API (left out of the build): the admin Devices and Messages pages'
 * reads without an API, for their fast tests (`<use-case>.test.ts` beside each) — the session and
 * pairing records in an in-memory Redis (as the connection service and the senders write them),
 * the message stores and the send queue faked over what the test fills in.
 */
export function devicesFixture() {
  const redis = new MemoryRedis();
  const records = new Map<string, MessageRecord | InboundRecord>();
  const jobs: { id: string; data: { messageId: string; enqueuedAt: number } }[] = [];
  const indexIds: string[] = [];
  const get = async (deviceId: string, id: string) => {
    const r = records.get(id);
    return r?.deviceId === deviceId ? r : undefined;
  };
  const d = {
    directory: new DeviceDirectory(
      redis.client,
      new CloudDeviceStore(redis.client, Encryption.fromEnv(), new MemorySessions()),
    ),
    sending: async () => ({ sentToday: 3 }) as SendingView,
    health: async () => ({ score: 90 }) as DeviceHealth,
    redis: redis.client,
    messages: { get, contentIdOf: async () => undefined },
    inbound: { get },
    revisions: { view: async () => ({}) },
    kinds: { read: async () => ({}), revisionOf: () => undefined },
    contents: { shown: async () => undefined },
    batches: { get: async () => undefined },
    index: {
      before: async (_d: string, before: number | undefined, count: number) =>
        indexIds
          .map((messageId, i) => ({ messageId, seq: indexIds.length - i }))
          .filter((e) => before === undefined || e.seq < before)
          .slice(0, count),
    },
    queueOf: () => ({ getJobs: async () => jobs }),
  } as unknown as DevicesDeps;
  /** A device's session record, as the connection service writes it. */
  const session = (deviceId: string, fields: Record<string, string>) =>
    redis.hash(keys.session(deviceId), fields);
  return { redis, records, jobs, indexIds, d, session };
}
export type DevicesFixture = ReturnType<typeof devicesFixture>;
