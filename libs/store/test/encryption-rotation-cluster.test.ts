import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Cluster } from 'ioredis';
import { keys } from '@mgw/contracts';
import { startRedisCluster, type ClusterHandle } from '@mgw/testing';
import { Encryption, EncryptionKey, encryptionStatus, reencrypt, storageContext } from '@mgw/store';

/** SCAN sees one node: on a cluster, status and reencrypt must visit every master. */
describe('encryption rotation on Redis Cluster (three masters)', function () {
  this.timeout(60_000);
  let cluster: ClusterHandle;
  let client: Cluster;
  const k1 = new EncryptionKey('k1', randomBytes(32));
  const k2 = new EncryptionKey('k2', randomBytes(32));

  before(async () => {
    cluster = await startRedisCluster();
    client = new Cluster(cluster.seeds.split(','));
  });
  after(async () => {
    client?.disconnect();
    await cluster?.stop();
  });

  it('When devices spread over every master hold old-key and plaintext values, then status counts them all and reencrypt converts them all', async () => {
    const before = Encryption.fromConfig({ current: k1, old: [] });
    const devices = Array.from({ length: 24 }, (_, i) => `dev-${i}`);
    for (const [i, d] of devices.entries()) {
      const key = keys.authCreds(d);
      await client.set(key, i % 2 ? before.sealText(`{"d":${i}}`, storageContext(key)) : `{"d":${i}}`);
    }
    const masters = new Set(await Promise.all(devices.map((d) => cluster.masterForKey(keys.authCreds(d)))));
    expect(masters.size, 'the devices live on every master').to.equal(3);

    const after = Encryption.fromConfig({ current: k2, old: [k1] });
    const status = await encryptionStatus(client, after);
    expect(status.find((s) => s.family === 'auth-creds')).to.deep.include({
      sealed: { k1: 12 },
      plaintext: 12,
    });

    const results = await reencrypt(client, after);
    expect(results.find((r) => r.family === 'auth-creds')).to.include({
      rewritten: 24,
      failed: 0,
      changed: 0,
    });
    const onlyK2 = Encryption.fromConfig({ current: k2, old: [] });
    for (const [i, d] of devices.entries()) {
      const key = keys.authCreds(d);
      expect(onlyK2.openText((await client.get(key))!, storageContext(key))).to.equal(`{"d":${i}}`);
    }
  });
});
