import type { PoolRecord, PoolStore, TokenStore } from '@mgw/store';
import type { ConnectionStatus } from '@mgw/contracts';
import type { DevicesDeps } from '../devices/devices.js';
import type { DropReason, PoolDevice } from '../../features/pools/pool-devices.js';

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
  /** The devices as a pooled send sees them (features/pools/pool-devices.ts): who takes a share. */
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

/** The API tokens that send through the pool: while there are any, it cannot be deleted. */
export async function tokensOfPool(
  tokens: TokenStore,
  poolId: string,
): Promise<{ id: string; name: string }[]> {
  return (await tokens.list()).filter((t) => t.poolId === poolId).map((t) => ({ id: t.id, name: t.name }));
}

/**
 * Deletes a pool unless API tokens send through it (`in_use`, with them): a token left on a deleted
 * pool would answer errors to every send, so the operator revokes (or re-creates) them first.
 * The check and the delete are two steps: a token linked in between (an admin doing both at once)
 * is left on a deleted pool, and sending through it answers that the pool is not found.
 */
export async function deletePool(
  d: Pick<PoolsDeps, 'pools' | 'tokens'>,
  poolId: string,
): Promise<
  { kind: 'deleted' } | { kind: 'not_found' } | { kind: 'in_use'; tokens: { id: string; name: string }[] }
> {
  if (!(await d.pools.get(poolId))) return { kind: 'not_found' };
  const linked = await tokensOfPool(d.tokens, poolId);
  if (linked.length > 0) return { kind: 'in_use', tokens: linked };
  return (await d.pools.delete(poolId)) ? { kind: 'deleted' } : { kind: 'not_found' };
}
