import { expect } from 'chai';
import { createMetrics } from '@mgw/contracts';
import { OPT_OUT_DEFAULTS } from '@mgw/store';
import { MemoryRedis } from '../test-support.js';
import { changeOptOutSettings } from './opt-outs.js';

/**
 * The opt-out settings as the admin API changes them (the device's settings hash in an in-memory
 * Redis). Adding and removing a contact is one script of libs/store (opt-out-change): proved in the
 * full suite (libs/store/test/opt-out-identities.test.ts, features/devices/e2e/admin-devices.test.ts).
 */
describe("A device's opt-out settings: changeOptOutSettings (in-memory Redis)", () => {
  const deviceId = 'oo-1';
  let redis: MemoryRedis;
  const d = () => ({ redis: redis.client, metrics: createMetrics() });

  beforeEach(() => {
    redis = new MemoryRedis();
  });

  it('When settings change, then those in force after it; null puts a setting back to its default', async () => {
    const changed = await changeOptOutSettings(d(), deviceId, {
      optOutKeywords: ['HALT'],
      confirmation: false,
    });
    expect(changed).to.deep.equal({
      kind: 'changed',
      settings: {
        settings: { ...OPT_OUT_DEFAULTS, optOutKeywords: ['HALT'], confirmation: false },
        overrides: { optOutKeywords: ['HALT'], confirmation: false },
      },
    });
    expect(await changeOptOutSettings(d(), deviceId, { optOutKeywords: null })).to.deep.equal({
      kind: 'changed',
      settings: {
        settings: { ...OPT_OUT_DEFAULTS, confirmation: false },
        overrides: { confirmation: false },
      },
    });
  });

  it('When an opt-in keyword would also opt out, then refused naming it, and nothing is written', async () => {
    expect(await changeOptOutSettings(d(), deviceId, { optInKeywords: ['stop', 'GO'] })).to.deep.equal({
      kind: 'refused',
      reason: 'keyword_clash',
      keywords: ['stop'],
    });
    expect(redis.hashes.size).to.equal(0);
  });
});
