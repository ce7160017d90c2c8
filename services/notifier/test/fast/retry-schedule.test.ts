import { expect } from 'chai';
import { loadNotifierConfig } from '../../src/config.js';
import { retryDelayMs, scheduleOffsets } from '../../src/retry-schedule.js';

describe('notifier: retry schedule and config', () => {
  const env = { MGW_ENCRYPTION_KEY: `k1:${Buffer.alloc(32, 1).toString('base64')}` };

  it('When the defaults are used, then retries double from 10 s up to 3 h and the last attempt comes about a day after the first', () => {
    const { retry } = loadNotifierConfig(env);
    const offsets = scheduleOffsets(retry);
    expect(offsets).to.have.length(retry.attempts - 1);
    expect(retryDelayMs(retry, 1, () => 0.5)).to.equal(10_000);
    expect(retryDelayMs(retry, 2, () => 0.5)).to.equal(20_000);
    expect(retryDelayMs(retry, 17, () => 0.5)).to.equal(3 * 3600_000);
    const lastHours = offsets.at(-1)! / 3600_000;
    expect(lastHours).to.be.within(20, 28);
  });

  it('When jitter is drawn, then a delay stays within ±20 % of its exact value', () => {
    const schedule = { attempts: 5, baseMs: 1000, maxMs: 60_000 };
    expect(retryDelayMs(schedule, 3, () => 0)).to.equal(3200);
    expect(retryDelayMs(schedule, 3, () => 1)).to.equal(4800);
  });

  it('When the maximum delay is below the base, then the config names both variables', () => {
    expect(() =>
      loadNotifierConfig({ ...env, WEBHOOK_RETRY_BASE_MS: '5000', WEBHOOK_RETRY_MAX_MS: '1000' }),
    ).to.throw(/WEBHOOK_RETRY_MAX_MS must be at least WEBHOOK_RETRY_BASE_MS/);
  });
});
