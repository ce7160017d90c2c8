import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { Encryption } from '@mgw/store';
import { loadApiConfig } from '../../config.js';
import { MemorySessions, MemoryRedis } from '../test-support.js';
import { handPasskey, passkeyLinkRuns, readPasskey } from './passkey.js';
import { readStatus } from './read-status.js';

/**
 * GET /status and a passkey-gated link without an API: the session records in memory, the device's
 * sending counters and pairing record in an in-memory Redis (as the sender and the connection
 * service write them). A pairing whose replica is alive is a script's question (LivenessSet): that
 * part runs in the full suite (services/api/test/e2e/passkey-link.test.ts).
 */
describe('Connection: readStatus, and a passkey link that is not running (in-memory sessions and Redis)', () => {
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
    expect(await passkeyLinkRuns(redis.client, deviceId)).to.equal(false);
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

  it('When no passkey link waits on the device (no pairing, or one not running), then nothing to read and nothing handed in: none, no command published', async () => {
    const s = { redis: redis.client, bullRedis: redis.client, encryption: Encryption.fromEnv() };
    expect(await readPasskey(s, deviceId)).to.equal(undefined);
    expect(await handPasskey(s, deviceId, { code: '123456' })).to.deep.equal({ kind: 'none' });
    redis.hash(keys.pairing(deviceId), { passkeyStep: 'confirm_code' });
    expect(await handPasskey(s, deviceId, { code: '123456' })).to.deep.equal({ kind: 'none' });
    expect(redis.published).to.deep.equal([]);
  });
});
