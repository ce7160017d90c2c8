import { expect } from 'chai';
import { CLOUD_LIMITS } from '@mgw/contracts';
import { verifyHandshake } from './verify-handshake.js';

/** The verify-token index as CloudDeviceStore keeps it: token -> devices. */
const devices = (tokens: Record<string, string[]>) => ({
  devicesOfVerifyToken: (token: string) => Promise.resolve(tokens[token] ?? []),
});
const store = devices({ 'verify-1': ['d1'], 'verify-2': ['d2', 'd3'] });
const query = (over: Record<string, unknown> = {}) => ({
  'hub.mode': 'subscribe',
  'hub.verify_token': 'verify-1',
  'hub.challenge': '1158201444',
  ...over,
});

describe('cloud-webhook: the verification handshake', () => {
  it('When the token is a cloud device’s, then the challenge is answered as it came', async () => {
    expect(await verifyHandshake(store, query())).to.deep.equal({ ok: true, challenge: '1158201444' });
    expect(
      await verifyHandshake(store, query({ 'hub.verify_token': 'verify-2', 'hub.challenge': 'ab_C-9' })),
    ).to.deep.equal({
      ok: true,
      challenge: 'ab_C-9',
    });
  });

  it('When the token is no device’s, or the mode is not subscribe, then it is refused', async () => {
    expect(await verifyHandshake(store, query({ 'hub.verify_token': 'verify-3' }))).to.deep.equal({
      ok: false,
    });
    expect(await verifyHandshake(store, query({ 'hub.mode': 'unsubscribe' }))).to.deep.equal({ ok: false });
    expect(await verifyHandshake(store, {})).to.deep.equal({ ok: false });
  });

  it('When a parameter is hostile (markup, repeated, too long, not a string), then it is refused and nothing is looked up', async () => {
    let lookups = 0;
    const counting = {
      devicesOfVerifyToken: (token: string) => {
        lookups++;
        return store.devicesOfVerifyToken(token);
      },
    };
    for (const over of [
      { 'hub.challenge': '<script>alert(1)</script>' },
      { 'hub.challenge': '' },
      { 'hub.challenge': '1'.repeat(129) },
      { 'hub.challenge': ['1', '2'] },
      { 'hub.challenge': { a: '1' } },
      { 'hub.challenge': '12 34' },
      { 'hub.verify_token': ['verify-1', 'verify-1'] },
      { 'hub.verify_token': 'v'.repeat(CLOUD_LIMITS.verifyToken + 1) },
      { 'hub.verify_token': '' },
      { 'hub.mode': ['subscribe'] },
    ])
      expect(await verifyHandshake(counting, query(over)), JSON.stringify(over).slice(0, 40)).to.deep.equal({
        ok: false,
      });
    expect(lookups).to.equal(0);
  });
});
