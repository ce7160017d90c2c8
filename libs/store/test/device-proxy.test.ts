import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys } from '@mgw/contracts';
import {
  DeviceProxyStore,
  Encryption,
  EncryptionKey,
  parseProxyUrl,
  ProxyUrlError,
  storageContext,
} from '@mgw/store';

describe('device proxies: the URL checked, sealed at rest, shown without credentials (real Redis)', function () {
  this.timeout(30_000);
  let redis: Redis;
  const encryption = Encryption.fromConfig({ current: new EncryptionKey('k1', randomBytes(32)), old: [] });
  // The suite's Redis: device ids of this run only.
  const shop1 = `proxy-shop-1-${process.pid}`;
  const shop2 = `proxy-shop-2-${process.pid}`;

  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    await redis.del(keys.deviceProxy(shop1), keys.deviceProxy(shop2));
    await redis.quit();
  });

  it('When a URL is HTTP or SOCKS5 with a host and port, then it is accepted with or without credentials', () => {
    expect(parseProxyUrl('http://alice:s3cret@10.0.0.5:3128')).to.deep.equal({
      scheme: 'http',
      host: '10.0.0.5',
      port: 3128,
      href: 'http://alice:s3cret@10.0.0.5:3128',
      hasCredentials: true,
    });
    expect(parseProxyUrl('socks5://proxy.example:1080')).to.include({
      scheme: 'socks5',
      hasCredentials: false,
    });
    expect(parseProxyUrl('socks5://[::1]:1080/')).to.include({ host: '[::1]', port: 1080 });
  });

  it('When a URL is no proxy URL, then ProxyUrlError says why without repeating it', () => {
    const bad: [string, RegExp][] = [
      ['', /must be a proxy URL/],
      ['hidden-pw', /must be a URL/],
      ['https://u:hidden-pw@h:3128', /scheme http .* or socks5/],
      ['socks4://h:1080', /scheme/],
      ['http://u:hidden-pw@h', /port/],
      ['http://h:3128/path', /no path, query or fragment/],
      ['http://h:3128?x=1', /no path, query or fragment/],
      ['http://h:3128#f', /no path, query or fragment/],
      ['http://:hidden-pw@h:3128', /password but no user name/],
      [`http://h:3128/${'a'.repeat(2100)}`, /at most 2048/],
      // Broken percent-encoding (issue 52): in the password, the user, the host, a path.
      ['http://u:%ZZ@h:1', /% that starts no escape/],
      ['http://u:hidden-pw%4@h:3128', /% that starts no escape/],
      ['socks5://hidden%-pw:p@h:1080', /% that starts no escape/],
      ['http://h%zz:3128', /% that starts no escape/],
      ['http://u:hidden-pw@h:3128/%', /% that starts no escape/],
    ];
    for (const [url, why] of bad) {
      const err = (() => {
        try {
          parseProxyUrl(url);
        } catch (e) {
          return e as Error;
        }
        throw new Error(`${url} was accepted`);
      })();
      expect(err, url).to.be.instanceOf(ProxyUrlError);
      expect(err.message, url).to.match(why);
      expect(err.message, url).not.to.include('hidden-pw');
    }
  });

  it('When a proxy is stored, then Redis holds it sealed, the view has no credentials, and remove forgets it', async () => {
    const store = new DeviceProxyStore(redis, encryption);
    const view = await store.set(
      shop1,
      'socks5://bob.user:hidden-pw@127.0.0.1:1080',
      new Date('2026-01-02T03:04:05Z'),
    );
    expect(view).to.deep.equal({
      url: 'socks5://127.0.0.1:1080',
      scheme: 'socks5',
      host: '127.0.0.1',
      port: 1080,
      hasCredentials: true,
      updatedAt: '2026-01-02T03:04:05.000Z',
    });
    const raw = (await redis.getBuffer(keys.deviceProxy(shop1)))!;
    expect(raw.toString('latin1')).not.to.include('hidden-pw');
    expect(raw.toString('latin1')).not.to.include('bob.user');
    expect(encryption.openText(raw.toString(), storageContext(keys.deviceProxy(shop1)))).to.include(
      'hidden-pw',
    );
    expect((await store.get(shop1))?.href).to.equal('socks5://bob.user:hidden-pw@127.0.0.1:1080');
    expect(await store.view(shop1)).to.deep.equal(view);
    expect(await store.remove(shop1)).to.equal(true);
    expect(await store.remove(shop1)).to.equal(false);
    expect(await store.get(shop1)).to.equal(undefined);
  });

  it('When a device is set to connect directly, then its setting says so, it has no proxy, and a proxy set later replaces it', async () => {
    const store = new DeviceProxyStore(redis, encryption);
    const direct = await store.setDirect(shop2, new Date('2026-01-02T03:04:05Z'));
    expect(direct).to.deep.equal({ direct: true, updatedAt: '2026-01-02T03:04:05.000Z' });
    expect(await store.setting(shop2)).to.deep.equal(direct);
    expect(await store.view(shop2)).to.deep.equal(direct);
    expect(await store.get(shop2), 'no proxy of its own').to.equal(undefined);
    await store.set(shop2, 'http://127.0.0.1:3128');
    const setting = await store.setting(shop2);
    expect(setting?.direct).to.equal(false);
    expect((await store.get(shop2))?.href).to.equal('http://127.0.0.1:3128');
    expect(await store.remove(shop2)).to.equal(true);
    expect(await store.setting(shop2)).to.equal(undefined);
  });
});
