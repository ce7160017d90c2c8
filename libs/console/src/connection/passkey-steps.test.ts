import { expect } from 'chai';
import { passkeyFailure, reasonWords } from './passkey-steps';

describe('console: why a link failed, in words (connection/passkey-steps.tsx)', () => {
  it('When a passkey-gated link failed, then its reason has a sentence and a few words for the Devices table', () => {
    expect(passkeyFailure('passkey_expired')).to.be.a('string').and.not.equal('');
    expect(reasonWords('passkey_rejected')).to.equal('passkey refused by WhatsApp');
  });

  it('When the reason is any other, then it has no passkey sentence, and its words are its own with spaces', () => {
    expect(passkeyFailure('logged_out')).to.equal(undefined);
    expect(passkeyFailure(undefined)).to.equal(undefined);
    expect(reasonWords('connection_replaced')).to.equal('connection replaced');
  });

  it('When the reason names what every object has (constructor, toString, __proto__), then it is a reason like any other, never a function shown as text', () => {
    for (const reason of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      expect(passkeyFailure(reason), reason).to.equal(undefined);
      expect(reasonWords(reason), reason).to.equal(reason.replace(/_/g, ' '));
    }
  });
});
