import { expect } from 'chai';
import { parseAllowedPrivateHosts } from '@mgw/common';
import { startCloudSim } from '@mgw/cloud-sim';
import { GraphClient, GraphUnreachableError } from '@mgw/cloud';

/**
 * A closed port is a real refused connection: outside the fast lane, which refuses every TCP
 * connection to a server this process does not hold.
 */
describe('GraphClient when the Graph API is not there', () => {
  const NUMBER = {
    id: '1001',
    wabaId: '2001',
    displayPhoneNumber: '+1 555-010-0001',
    verifiedName: 'Shop',
    accessToken: 'token-1',
    appSecret: 'secret-1',
  };
  const number = { phoneNumberId: '1001', wabaId: '2001', accessToken: 'token-1', graphVersion: 'v21.0' };

  it('When nothing listens at the Graph URL, then the request never left (reached is false)', async () => {
    const closed = await startCloudSim({ numbers: [NUMBER] });
    const url = closed.url;
    await closed.close();
    const dead = new GraphClient({ baseUrl: url, allowList: parseAllowedPrivateHosts('127.0.0.1') });
    const err = await dead.phoneNumber(number).catch((e) => e);
    expect(err).to.be.instanceOf(GraphUnreachableError);
    expect(err.reached).to.equal(false);
  });
});
