/** The pools as the dashboard shows them: each device of each with its standing (docs/pools.md). */
import type { PoolRecord, PoolStore, TokenStore } from '@mgw/store';
import type { ConnectionStatus } from '@mgw/contracts';
import type { DevicesDeps } from '../devices/index.js';
import type { DropReason, PoolDevice } from './pool-devices.js';

/** A pool device's standing, as the Devices page shows it: enough to see which ones can send. */
export interface PoolDeviceState {
  deviceId: string;
  status: ConnectionStatus;
  linked: boolean;
  /** The health score (0–100) of a linked or connecting device. */
  healthScore?: number;
  /**
   * Whether it takes its share of the pool's lists now (`taking`), or why it dropped out of the
   * spread (its waiting pooled messages move to the others): docs/pools.md.
   */
  spread: 'taking' | DropReason;
}

export type PoolView = PoolRecord & { deviceStates: PoolDeviceState[] };

export interface PoolsDeps {
  pools: PoolStore;
  tokens: TokenStore;
  /** The Devices page's reads: each device's session fields, its sending view and health. */
  devices: Pick<DevicesDeps, 'directory' | 'sending' | 'health'>;
  /** The devices as a pooled send sees them (pool-devices.ts): who takes a share. */
  spread: (deviceIds: string[]) => Promise<PoolDevice[]>;
}

/**
 * The pools with each device's status, linked flag and health score. Devices are read once each,
 * however many pools name them (a few reads per device, as the Devices page does).
 */
export async function poolViews(d: PoolsDeps, pools: PoolRecord[]): Promise<PoolView[]> {
  const ids = [...new Set(pools.flatMap((p) => p.devices))];
  const views = ids.length === 0 ? [] : await d.devices.directory.read(ids);
  const spread = new Map<string, PoolDeviceState['spread']>(
    (await d.spread(ids)).map((p) => [p.deviceId, p.dropped ?? 'taking']),
  );
  const states = new Map<string, PoolDeviceState>();
  await Promise.all(
    views.map(async (v) => {
      const state: PoolDeviceState = {
        deviceId: v.deviceId,
        status: v.status,
        linked: v.linked,
        spread: spread.get(v.deviceId) ?? 'not_linked',
      };
      if (v.linked || v.status !== 'disconnected') {
        const sending = await d.devices.sending(v.deviceId);
        state.healthScore = (await d.devices.health(v.deviceId, sending)).score;
      }
      states.set(v.deviceId, state);
    }),
  );
  return pools.map((p) => ({ ...p, deviceStates: p.devices.map((id) => states.get(id)!) }));
}
