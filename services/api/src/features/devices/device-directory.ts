import type { Cluster, Redis } from 'ioredis';
import QRCode from 'qrcode';
import {
  PASSKEY_STEPS,
  keys,
  type ConnectionStatus,
  type DeviceEngine,
  type PasskeyStep,
  cloudPhoneOf,
} from '@mgw/contracts';
import { scanNodes, type CloudDeviceStore } from '@mgw/store';

/** A device as the dashboard lists it. */
export interface DeviceView {
  deviceId: string;
  /** `cloud` while it holds a Cloud API configuration (features/cloud), else `linked`. */
  engine: DeviceEngine;
  status: ConnectionStatus;
  /** Has credentials (in the linked set): a sender serves it. */
  linked: boolean;
  phone?: string;
  name?: string;
  profilePic?: string;
  /** Messages waiting in its queue (the quota counter). */
  queued: number;
  updatedAt?: string;
  connectedAt?: string;
  lastDisconnectReason?: string;
  lastDisconnectAt?: string;
  /** While connecting: the step of a passkey-gated link (docs/passkeys.md), if it waits on one. */
  passkeyStep?: PasskeyStep;
}

/** The pairing in progress, as the connection service keeps it (`keys.pairing`). */
export interface PairingView {
  state: 'starting' | 'showing' | 'failed' | 'paired';
  method: 'qrCode' | 'pairingCode';
  /** The raw QR string and the same as a PNG data URL, while a QR pairing shows one. */
  qr?: string;
  qrImage?: string;
  pairingCode?: string;
  reason?: string;
  /**
   * A passkey-gated link (docs/passkeys.md): its step and when its request expires (ISO). The QR
   * or code was used then, so neither is shown; the request's options and the phone's code are
   * read from GET /devices/:deviceId/connect/passkey.
   */
  passkey?: { step: PasskeyStep; expiresAt: string };
}

const SESSION_PATTERN = 'mgw:{*}:session';
const SESSION_KEY = /^mgw:\{([a-z0-9][a-z0-9_-]{0,31})\}:session$/;
const SCAN_COUNT = 1000;
/** How long a scan of the session records is reused: the dashboard polls every few seconds. */
const SCAN_REUSE_MS = 15_000;
const SESSION_FIELDS = [
  'status',
  'phone',
  'name',
  'profilePic',
  'updatedAt',
  'connectedAt',
  'lastDisconnectReason',
  'lastDisconnectAt',
  'passkeyStep',
] as const;

/**
 * Which devices exist: the linked set ∪ the Cloud API devices ∪ every device with a session record. Session records are
 * found by SCAN, which sees one node at a time, so it runs per node (the one server, or each
 * master of a Cluster: `scanNodes`). A scan walks the whole keyspace, so its result is reused for
 * a few seconds while the linked set and each device's fields are read fresh on every call.
 */
export class DeviceDirectory {
  private scanned: { at: number; ids: Set<string> } | undefined;
  private scanning: Promise<Set<string>> | undefined;
  /** Ids named since the last scan (a link started from the dashboard), listed before the next scan. */
  private readonly noted = new Set<string>();

  constructor(
    private readonly redis: Redis | Cluster,
    /** A Cloud API device's status, number and name are its own, not a session record's. */
    private readonly cloud: Pick<CloudDeviceStore, 'engineOf' | 'state' | 'profile'>,
  ) {}

  note(deviceId: string): void {
    this.noted.add(deviceId);
  }

  async ids(): Promise<string[]> {
    const [linked, cloud, scanned] = await Promise.all([
      this.redis.smembers(keys.linkedDevices()),
      // Cloud API devices have no session record: one configured but not connected is found by
      // its number (the install's index of cloud numbers, phone-number id -> device).
      this.redis.hvals(keys.cloudNumbers()),
      this.scan(),
    ]);
    return [...new Set([...linked, ...cloud, ...scanned, ...this.noted])].sort();
  }

  async list(): Promise<DeviceView[]> {
    const ids = await this.ids();
    return ids.length === 0 ? [] : this.read(ids);
  }

  async get(deviceId: string): Promise<DeviceView> {
    const [view] = await this.read([deviceId]);
    return view!;
  }

  /**
   * Each device's session fields, linked flag and queue count. Separate commands, not one
   * pipeline: on a Cluster each device's keys live in its own slot (the connection auto-pipelines).
   */
  async read(ids: string[]): Promise<DeviceView[]> {
    const [linkedIds, perDevice] = await Promise.all([
      this.redis.smembers(keys.linkedDevices()),
      Promise.all(
        ids.map((id) =>
          Promise.all([
            this.redis.hmget(keys.session(id), ...SESSION_FIELDS),
            this.redis.hget(keys.deviceQueue(id), 'messages'),
          ]),
        ),
      ),
    ]);
    const linked = new Set(linkedIds);
    const engines = await Promise.all(ids.map((id) => this.cloud.engineOf(id)));
    const views = ids.map((deviceId, i) => {
      const [fields, messages] = perDevice[i]!;
      const queued = Number(messages ?? 0);
      const view: DeviceView = {
        deviceId,
        engine: engines[i]!,
        status: (fields[0] as ConnectionStatus | null) ?? 'disconnected',
        linked: linked.has(deviceId),
        queued: Number.isFinite(queued) ? Math.max(0, queued) : 0,
      };
      SESSION_FIELDS.forEach((field, f) => {
        const value = fields[f];
        // Account details are shown only while connected, as GET /status does; a passkey step
        // only while connecting.
        const accountField = field === 'phone' || field === 'name' || field === 'profilePic';
        if (field === 'passkeyStep') {
          if (value && view.status === 'connecting' && (PASSKEY_STEPS as readonly string[]).includes(value))
            view.passkeyStep = value as PasskeyStep;
        } else if (field !== 'status' && value && (!accountField || view.status === 'connected'))
          view[field] = value;
      });
      return view;
    });
    return Promise.all(views.map((view) => (view.engine === 'cloud' ? this.withCloudState(view) : view)));
  }

  /** A Cloud API device as its own state says: connected or not, its number and verified name. */
  private async withCloudState(view: DeviceView): Promise<DeviceView> {
    const [state, profile] = await Promise.all([
      this.cloud.state(view.deviceId),
      this.cloud.profile(view.deviceId),
    ]);
    const shown: DeviceView = {
      deviceId: view.deviceId,
      engine: 'cloud',
      status: state?.status ?? 'disconnected',
      linked: view.linked,
      queued: view.queued,
    };
    if (shown.status === 'connected' && profile) {
      const phone = cloudPhoneOf(profile);
      if (phone) shown.phone = phone;
      if (profile.verifiedName) shown.name = profile.verifiedName;
    }
    if (state?.status === 'disconnected' && state.reason) {
      shown.lastDisconnectReason = state.reason;
      shown.lastDisconnectAt = state.at;
    }
    if (state?.status === 'connected') shown.connectedAt = state.at;
    return shown;
  }

  async pairing(deviceId: string): Promise<PairingView | undefined> {
    const h = await this.redis.hgetall(keys.pairing(deviceId));
    if (!h.pairingId || !h.state) return undefined;
    const view: PairingView = {
      state: h.state as PairingView['state'],
      method: h.method === 'pairingCode' ? 'pairingCode' : 'qrCode',
    };
    const step = (PASSKEY_STEPS as readonly string[]).includes(h.passkeyStep ?? '')
      ? (h.passkeyStep as PasskeyStep)
      : undefined;
    const expiresAt = Number(h.passkeyExpiresAt);
    if (step && h.state === 'showing' && Number.isFinite(expiresAt) && expiresAt > 0)
      view.passkey = { step, expiresAt: new Date(expiresAt).toISOString() };
    else {
      if (h.qr && h.state === 'showing') {
        view.qr = h.qr;
        view.qrImage = await qrImage(h.qr);
      }
      if (h.pairingCode && h.state === 'showing') view.pairingCode = h.pairingCode;
    }
    if (h.reason) view.reason = h.reason;
    return view;
  }

  private async scan(): Promise<Set<string>> {
    if (this.scanned && Date.now() - this.scanned.at < SCAN_REUSE_MS) return this.scanned.ids;
    this.scanning ??= scanSessions(this.redis)
      .then((ids) => {
        this.scanned = { at: Date.now(), ids };
        this.noted.clear();
        return ids;
      })
      .finally(() => {
        this.scanning = undefined;
      });
    return this.scanning;
  }
}

/** Every device id with a session record, node by node. */
export async function scanSessions(redis: Redis | Cluster): Promise<Set<string>> {
  const ids = new Set<string>();
  for (const node of scanNodes(redis)) {
    let cursor = '0';
    do {
      const [next, found] = await node.scan(
        cursor,
        'MATCH',
        SESSION_PATTERN,
        'COUNT',
        SCAN_COUNT,
        'TYPE',
        'hash',
      );
      cursor = next;
      for (const key of found) {
        const id = SESSION_KEY.exec(key)?.[1];
        if (id) ids.add(id);
      }
    } while (cursor !== '0');
  }
  return ids;
}

/** The same PNG the public API's /connect answers (libs/messenger renders it alike). */
export function qrImage(qr: string): Promise<string> {
  return QRCode.toDataURL(qr, { errorCorrectionLevel: 'L', margin: 2, scale: 6 });
}
