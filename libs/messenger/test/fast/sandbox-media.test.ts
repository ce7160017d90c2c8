import { expect } from 'chai';
import { SandboxMediaError, sandboxMediaFetcher, sandboxMediaUrl } from '../../src/index.js';

describe('sandbox mode: every media address is the sandbox’s (sandboxMediaUrl)', () => {
  it('When a file is named on WhatsApp’s CDN or by any other host, then it is fetched from the sandbox’s media host, same path and query', () => {
    const origin = 'https://127.0.0.1:9443';
    expect(sandboxMediaUrl('https://mmg.whatsapp.net/v/t62.history/abc.enc', origin)).to.equal(
      'https://127.0.0.1:9443/v/t62.history/abc.enc',
    );
    expect(sandboxMediaUrl('https://media.example.net/mms/image/x?auth=1&mms-type=image', origin)).to.equal(
      'https://127.0.0.1:9443/mms/image/x?auth=1&mms-type=image',
    );
    expect(sandboxMediaUrl('https://127.0.0.1:9443/mms/doc/y', `${origin}/`)).to.equal(
      'https://127.0.0.1:9443/mms/doc/y',
    );
  });

  it('When the sandbox published no media host, then each download fails saying so, and nothing is fetched', async () => {
    const asked: string[] = [];
    const fetch = sandboxMediaFetcher(async (url: string) => (asked.push(url), Buffer.alloc(0)), undefined);
    const err = await fetch('https://mmg.whatsapp.net/v/t62.history/abc.enc').catch((e: unknown) => e);
    expect(err).to.be.instanceOf(SandboxMediaError);
    expect((err as Error).message).to.match(/no mediaUrl in its \/info.*never fetches media from WhatsApp/);
    expect(asked).to.deep.equal([]);
  });
});
