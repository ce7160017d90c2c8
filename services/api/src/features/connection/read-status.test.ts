import { expect } from 'chai';
import { loadApiConfig } from '../../config.js';
import { MemorySessions, MemoryRedis } from '../test-support.js';
import { readStatus } from './read-status.js';

/**
 * GET /status without an API: the session records in memory, the device's sending counters in an
 * in-memory Redis (as the sender writes them).
 */
describe("readStatus: the device's status, account and sending (in-memory sessions and Redis)", () => {
  const config = loadApiConfig({ ...process.env, NODE_ENV: 'test' });
  const deviceId = 'cs-1';
  let sessions: MemorySessions;
  let redis: MemoryRedis;
  const status = () => readStatus({ sessions, redis: redis.client, config }, deviceId);

  beforeEach(() => {
    sessions = new MemorySessions();
    redis = new MemoryRedis();
  });

  it('When the device is connected, then its account (phone, name, picture) and its sending: today’s counts against the caps and its health', async () => {
    sessions.update(deviceId, 'connected', {
      phone: '15550001111',
      name: 'Shop',
      profilePic: 'https://x.test/p.jpg',
    });
    const body = await status();
    expect(body).to.deep.include({
      success: true,
      status: 'connected',
      phone: '15550001111',
      name: 'Shop',
      profilePic: 'https://x.test/p.jpg',
    });
    const sending = body.sending as { sentToday: number; health: { score: number } };
    expect(sending.sentToday).to.equal(0);
    expect(sending.health.score).to.equal(100);
  });

  it('When the device is reconnecting, then no account shown; a proxy that is the cause is the reason, and it still shows its sending', async () => {
    sessions.update(deviceId, 'connecting', { phone: '15550001111', lastDisconnectReason: 'proxy_auth' });
    const body = await status();
    expect(body).to.deep.include({ status: 'connecting', reason: 'proxy_auth' });
    expect(body).not.to.have.property('phone');
    expect(body).to.have.property('sending');
    sessions.update(deviceId, 'connecting', { lastDisconnectReason: 'connection_lost' });
    expect(await status()).not.to.have.property('reason');
  });

  it('When the session shows a passkey step but no link runs now (no pairing record), then it is not shown', async () => {
    sessions.update(deviceId, 'connecting', {
      passkeyStep: 'assertion',
      passkeyExpiresAt: new Date().toISOString(),
    });
    expect(await status()).not.to.have.property('passkey');
  });

  it('When the device is disconnected, then no sending; a passkey link that ended it is the reason, another reason is not', async () => {
    sessions.update(deviceId, 'disconnected', { lastDisconnectReason: 'passkey_rejected' });
    expect(await status()).to.deep.equal({
      success: true,
      status: 'disconnected',
      reason: 'passkey_rejected',
    });
    sessions.update(deviceId, 'disconnected', { lastDisconnectReason: 'logged_out' });
    expect(await status()).to.deep.equal({ success: true, status: 'disconnected' });
  });
});
