import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { signPayload, verifySignature } from './signature.js';

describe('cloud-sim: webhook signatures', () => {
  const body = '{"object":"whatsapp_business_account","entry":[]}';

  it('When a payload is signed, then the header is sha256= and the hex HMAC-SHA256 of the raw body with the app secret', () => {
    const hex = createHmac('sha256', 'app-secret').update(body).digest('hex');
    expect(signPayload(body, 'app-secret')).to.equal(`sha256=${hex}`);
    expect(signPayload(Buffer.from(body), 'app-secret')).to.equal(`sha256=${hex}`);
  });

  it('When the body, the secret or the header differ, then the signature does not verify', () => {
    const header = signPayload(body, 'app-secret');
    expect(verifySignature(body, header, 'app-secret')).to.equal(true);
    expect(verifySignature(`${body} `, header, 'app-secret')).to.equal(false);
    expect(verifySignature(body, header, 'other-secret')).to.equal(false);
    expect(verifySignature(body, header.slice(0, -1), 'app-secret')).to.equal(false);
    expect(verifySignature(body, undefined, 'app-secret')).to.equal(false);
  });
});
