import { expect } from 'chai';
import { channelKeyOf, groupJoinBodySchema, inviteCodeOf, validate } from '../../src/index.js';

/** WhatsApp's shared links in 2026 carry a query (`?mode=…`); whatsmeow 7c107215 strips it. */
describe('contracts: invite links as WhatsApp shares them', () => {
  const code = 'AbCdEfGhIjKlMnOpQrStUv';

  it('When a group invite link carries a query or a fragment, then POST /groups/join takes it and the code is the path part', () => {
    for (const link of [
      code,
      `https://chat.whatsapp.com/${code}`,
      `chat.whatsapp.com/${code}`,
      `https://chat.whatsapp.com/${code}?mode=ems_copy_t`,
      `https://chat.whatsapp.com/${code}/?mode=wwt#x`,
    ]) {
      expect(validate(groupJoinBodySchema, { code: link }).details, link).to.equal(undefined);
      expect(inviteCodeOf(link), link).to.equal(code);
    }
  });

  it('When the value is no invite, then it is still refused', () => {
    for (const bad of [
      `https://chat.whatsapp.com/${code} extra`,
      `https://evil.example/chat.whatsapp.com/${code}`,
      `${code}?mode=x`,
      'short',
    ]) {
      expect(inviteCodeOf(bad), bad).to.equal(undefined);
      expect(validate(groupJoinBodySchema, { code: bad }).details, bad).to.not.equal(undefined);
    }
  });

  it('When a channel link carries a query, then it names the channel by its invite code', () => {
    expect(channelKeyOf(`https://whatsapp.com/channel/0029VaAbCdEfGhIjKlMnOp12?mode=ac_t`)).to.deep.equal({
      kind: 'invite',
      code: '0029VaAbCdEfGhIjKlMnOp12',
    });
    expect(channelKeyOf('https://whatsapp.com/channel/0029VaAbCdEfGhIjKlMnOp12')).to.deep.equal({
      kind: 'invite',
      code: '0029VaAbCdEfGhIjKlMnOp12',
    });
  });
});
