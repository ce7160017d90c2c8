import { expect } from 'chai';
import { parseAllowedPrivateHosts } from '@mgw/common';
import { GraphClient, GraphUnreachableError } from '@mgw/cloud';
import { freePort } from '@mgw/testing';

/**
 * A port nothing listens on is a real refused connection: outside the fast lane, which refuses every
 * TCP connection to a server this process does not hold.
 */
describe('GraphClient when the Graph API is not there', () => {
  const number = { phoneNumberId: '1001', wabaId: '2001', accessToken: 'token-1', graphVersion: 'v21.0' };

  it('When nothing listens at the Graph URL, then the request never left (reached is false)', async () => {
    const dead = new GraphClient({
      baseUrl: `http://127.0.0.1:${await freePort()}`,
      allowList: parseAllowedPrivateHosts('127.0.0.1'),
    });
    const err = await dead.phoneNumber(number).catch((e) => e);
    expect(err).to.be.instanceOf(GraphUnreachableError);
    expect(err.reached).to.equal(false);
  });
});
