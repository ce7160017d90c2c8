import type { RedisClient } from '@mgw/common';
import type { MessageRecord } from '@mgw/contracts';
import {
  ContentStore,
  deviceHealth,
  sendingView,
  type BatchStore,
  type InboundStore,
  type MessageIndex,
  type MessageKindStore,
  type MessageRevisions,
  type MessageStore,
  type SendQueue,
  type SendingView,
  type DeviceHealth,
} from '@mgw/store';
import type { Uses } from '../../api-services.js';
import type { ConnectionServiceClient } from '../../clients/connection-service-client.js';
import { DeviceDirectory, type DeviceView, type PairingView } from './device-directory.js';
import { recentMessages, type DirectionFilter, type RecentMessages } from './recent-messages.js';
import { messageViews } from './message-view.js';

export interface DevicesDeps {
  directory: DeviceDirectory;
  /** Each linked device's usage of its sending policy and its pause (the `sending` of /status). */
  sending: (deviceId: string) => Promise<SendingView>;
  /** Its health score and the reasons that cost it points (the `health` of /status). */
  health: (deviceId: string, view: SendingView) => Promise<DeviceHealth>;
  connection: ConnectionServiceClient;
  messages: MessageStore;
  /** Edits and deletes shown on records (read/revised-record.ts). */
  revisions: MessageRevisions;
  /** Kind fields and mentions shown on records, and the phone <-> LID map (message-view.ts). */
  kinds: MessageKindStore;
  redis: RedisClient;
  /** Messages contacts wrote (listed with the recent ones, found by id: their writer, group and text). */
  inbound: InboundStore;
  /** The device's messages in order (GET /messages's): where the recent inbound ones are found. */
  index: MessageIndex;
  /** What an outbound text or attachment said (message-view.ts). */
  contents: ContentStore;
  batches: BatchStore;
  queueOf: (deviceId: string) => SendQueue;
}

/** What the devices' reads use of the services. */
export type DevicesServices = Uses<
  | 'redis'
  | 'connection'
  | 'messages'
  | 'revisions'
  | 'kinds'
  | 'inbound'
  | 'index'
  | 'encryption'
  | 'config'
  | 'batches'
  | 'acceptor'
  | 'cloudDevices'
>;

/** One set of reads per services object: the Devices page's and the pools' views share its directory. */
const built = new WeakMap<DevicesServices, DevicesDeps>();

/**
 * The devices' reads over the API's services, built once per services object (however many
 * features ask): the device directory's scan and the devices it was told of are one.
 */
export function devicesDeps(s: DevicesServices): DevicesDeps {
  let d = built.get(s);
  if (!d) {
    d = buildDevicesDeps(s);
    built.set(s, d);
  }
  return d;
}

function buildDevicesDeps(s: DevicesServices): DevicesDeps {
  return {
    directory: new DeviceDirectory(s.redis, s.cloudDevices),
    connection: s.connection,
    messages: s.messages,
    revisions: s.revisions,
    kinds: s.kinds,
    redis: s.redis,
    inbound: s.inbound,
    index: s.index,
    // Reads only (ContentStore.shown): the message retention bounds nothing it writes.
    contents: new ContentStore(s.redis, s.encryption, s.config.store.messageRetentionSeconds),
    batches: s.batches,
    queueOf: (deviceId: string) => s.acceptor.queue(deviceId),
    sending: (deviceId: string) => sendingView(s.redis, deviceId, s.config.sendPolicy),
    health: (deviceId: string, view: SendingView) =>
      deviceHealth(s.redis, deviceId, s.config.sendPolicy, Date.now(), view),
  };
}

/** Ids longer than this are no id the gateway gave: nothing is looked up for them. */
export const MAX_ID_LENGTH = 128;

type WithStanding = DeviceView & { sending?: SendingView; health?: DeviceHealth };

/** A linked or connecting device with its sending usage and health score, as /status has them. */
async function withStanding(d: DevicesDeps, device: DeviceView): Promise<WithStanding> {
  // A Cloud API device has no policy of the linked protocol's (caps, warm-up, health from acks).
  if (device.engine === 'cloud' || (!device.linked && device.status === 'disconnected')) return device;
  const sending = await d.sending(device.deviceId);
  return { ...device, sending, health: await d.health(device.deviceId, sending) };
}

/** One workspace's devices, for its console's lists (docs/workspaces.md "The console"). */
export interface WorkspaceDevices {
  workspace: string;
  /** The devices its set lists (WorkspaceStore.devices). */
  devices(workspace: string): Promise<string[]>;
  /** Who owns a device (`default` when no workspace names it: WorkspaceCache.ownerOf). */
  ownerOf(deviceId: string): Promise<string>;
}

/**
 * The devices a workspace owns as the Devices page knows them: those its set lists, and every
 * device of the directory it owns (default owns each device no workspace names, listed or not).
 */
export async function devicesOfWorkspace(
  d: Pick<DevicesDeps, 'directory'>,
  w: WorkspaceDevices,
): Promise<string[]> {
  const [listed, known] = await Promise.all([w.devices(w.workspace), d.directory.ids()]);
  const owned = await Promise.all(known.map(async (id) => (await w.ownerOf(id)) === w.workspace));
  return [...new Set([...listed, ...known.filter((_, i) => owned[i])])].sort();
}

/**
 * Every device the dashboard lists (`only`: one workspace's, for its console); one that is linked
 * or connecting with its usage and health.
 */
export async function listDevices(d: DevicesDeps, only?: WorkspaceDevices): Promise<WithStanding[]> {
  const devices = only ? await d.directory.read(await devicesOfWorkspace(d, only)) : await d.directory.list();
  return Promise.all(devices.map((device) => withStanding(d, device)));
}

/** A device (with its usage and health when linked), with the pairing in progress, if any. */
export async function showDevice(
  d: DevicesDeps,
  deviceId: string,
): Promise<{ device: WithStanding; pairing?: PairingView }> {
  const [device, pairing] = await Promise.all([d.directory.get(deviceId), d.directory.pairing(deviceId)]);
  return { device: await withStanding(d, device), ...(pairing ? { pairing } : {}) };
}

/** The device's recent messages, as the Messages page shows them (message-view.ts). */
export async function deviceMessages(
  d: DevicesDeps,
  deviceId: string,
  limit: number,
  direction: DirectionFilter,
): Promise<Omit<RecentMessages, 'messages'> & { messages: Record<string, unknown>[] }> {
  const recent = await recentMessages({ ...d, queue: d.queueOf(deviceId) }, deviceId, limit, direction);
  const messages = await messageViews(d, deviceId, recent.messages as MessageRecord[]);
  return { ...recent, messages };
}

/** Any message of the device still kept; one a contact wrote as the public GET /messages/:id shows it. */
export async function deviceMessage(
  d: DevicesDeps,
  deviceId: string,
  messageId: string,
): Promise<{ kind: 'found'; message: Record<string, unknown> } | { kind: 'not_found' }> {
  const record = messageId.length <= MAX_ID_LENGTH ? await d.messages.get(deviceId, messageId) : undefined;
  if (!record || record.deviceId !== deviceId) return { kind: 'not_found' };
  // A message a contact wrote: its writer, its group.
  const shown = record.direction === 'inbound' ? await d.inbound.get(deviceId, messageId) : record;
  if (!shown) return { kind: 'not_found' };
  const [message] = await messageViews(d, deviceId, [shown as unknown as MessageRecord]);
  return { kind: 'found', message: message! };
}
