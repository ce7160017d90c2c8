import { expect } from 'chai';
import { keys, type CloudDeviceState, type DeviceEngine } from '@mgw/contracts';
import type { PoolRecord } from '@mgw/store';
import { MemoryRedis } from '../test-support.js';
import { otpFallback, type OtpFallbackDeps } from './otp-fallback.js';

describe('otp: otpFallback — the device an OTP goes out through (in-memory Redis)', () => {
  let redis: MemoryRedis;
  let pools: PoolRecord[];
  let states: Map<string, CloudDeviceState>;
  let engines: Map<string, DeviceEngine>;
  let d: OtpFallbackDeps;

  const pool = (id: string, devices: string[], otpFallback = true): PoolRecord => ({
    id,
    name: id,
    devices,
    workspace: 'default',
    otpFallback,
    createdAt: '2026-11-30T00:00:00.000Z',
    updatedAt: '2026-11-30T00:00:00.000Z',
  });
  const restrict = (deviceId: string, until = Date.now() + 60_000) =>
    redis.client.hset(keys.deviceRestriction(deviceId), {
      reason: 'reachout_timelock',
      until: String(until),
      since: String(Date.now()),
    });
  const cloud = (deviceId: string, status: CloudDeviceState['status'] = 'connected') => {
    engines.set(deviceId, 'cloud');
    states.set(deviceId, { status, at: '2026-11-30T00:00:00.000Z' });
  };

  beforeEach(() => {
    redis = new MemoryRedis();
    pools = [];
    states = new Map();
    engines = new Map();
    d = {
      redis: redis.client,
      pools: { list: async () => pools },
      cloudDevices: { state: async (id: string) => states.get(id) },
      engines: { engineOf: (id: string) => engines.get(id) ?? 'linked' },
      retentionSeconds: 3600,
    };
  });

  it('When the linked device is restricted and its pool opted in with a connected cloud device, then the OTP goes through that device', async () => {
    pools = [pool('shops', ['linked-1', 'linked-2', 'cloud-1'])];
    cloud('cloud-1');
    await restrict('linked-1');
    expect(await otpFallback(d, 'linked-1')).to.equal('cloud-1');
  });

  it('When the linked device is not restricted (or its pause is over), then it sends its own OTP', async () => {
    pools = [pool('shops', ['linked-1', 'cloud-1'])];
    cloud('cloud-1');
    expect(await otpFallback(d, 'linked-1')).to.equal(undefined);
    await restrict('linked-1', Date.now() - 1);
    expect(await otpFallback(d, 'linked-1')).to.equal(undefined);
  });

  it('When the pool did not opt in, or its cloud device is disconnected, or the device is in no pool, then there is no fallback', async () => {
    await restrict('linked-1');
    pools = [pool('shops', ['linked-1', 'cloud-1'], false)];
    cloud('cloud-1');
    expect(await otpFallback(d, 'linked-1')).to.equal(undefined);
    pools = [pool('shops', ['linked-1', 'cloud-1'])];
    cloud('cloud-1', 'disconnected');
    expect(await otpFallback(d, 'linked-1')).to.equal(undefined);
    pools = [pool('other', ['linked-2', 'cloud-2'])];
    cloud('cloud-2');
    expect(await otpFallback(d, 'linked-1')).to.equal(undefined);
  });

  it('When several pools hold the device, then the first opted-in pool with a connected cloud device is used; a cloud device itself never falls back', async () => {
    await restrict('linked-1');
    pools = [pool('a', ['linked-1', 'cloud-off']), pool('b', ['cloud-2', 'linked-1', 'cloud-3'])];
    cloud('cloud-off', 'disconnected');
    cloud('cloud-2');
    cloud('cloud-3');
    expect(await otpFallback(d, 'linked-1')).to.equal('cloud-2');
    await restrict('cloud-2');
    expect(await otpFallback(d, 'cloud-2')).to.equal(undefined);
  });
});
