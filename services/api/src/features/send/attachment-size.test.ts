import { expect } from 'chai';
import { decodedBase64Size } from './attachment-size.js';

describe('decodedBase64Size', () => {
  it('When given padded or unpadded base64, then the exact decoded length without decoding', () => {
    for (let n = 0; n < 40; n++) {
      const b64 = Buffer.alloc(n, 1).toString('base64');
      expect(decodedBase64Size(b64), `padded ${n}`).to.equal(n);
      expect(decodedBase64Size(b64.replace(/=+$/, '')), `unpadded ${n}`).to.equal(n);
    }
  });
});
