import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { parseAllowedPrivateHosts } from '@mgw/common';
import { ATTACHMENT_MAX_BYTES, keys } from '@mgw/contracts';
import { createAttachmentFetcher } from '../src/send/media-source.js';
import { Pacer } from '../src/send/pacing.js';
import { PermanentSendError } from '../src/send/send-errors.js';
import { followUpId } from '../src/send/send-content.js';

describe('sender: pacing and attachment loading (real Redis, local HTTP)', () => {
  let redis: Redis;
  let server: http.Server;
  let base = '';
  const device = `pace-${Math.random().toString(36).slice(2, 8)}`;

  before(async () => {
    redis = new Redis(process.env.REDIS_URL!);
    server = http.createServer((req, res) => {
      if (req.url === '/chunked-huge') {
        // No Content-Length: the cap must be enforced while reading.
        res.writeHead(200);
        const chunk = Buffer.alloc(1024 * 1024);
        for (let i = 0; i < 11; i++) res.write(chunk);
        res.end();
      } else if (req.url === '/small') res.writeHead(200).end(Buffer.from('hello'));
      else if (req.url === '/slow') setTimeout(() => res.writeHead(200).end('late'), 2000);
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await redis.del(keys.deviceSettings(device));
    await redis.quit();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  async function reason(p: Promise<unknown>): Promise<string | undefined> {
    try {
      await p;
      return undefined;
    } catch (err) {
      expect(err).to.be.instanceOf(PermanentSendError);
      return (err as PermanentSendError).reason;
    }
  }

  it('When a device has a sendGapMs override, then consecutive sends are at least that far apart', async () => {
    await redis.hset(keys.deviceSettings(device), 'sendGapMs', '150');
    const pacer = new Pacer(redis, device, 5000, 0);
    expect(await pacer.gapMs()).to.equal(150);
    const stamps: number[] = [];
    for (let i = 0; i < 3; i++) {
      await pacer.wait();
      stamps.push(Date.now());
    }
    expect(stamps[2]! - stamps[0]!).to.be.at.least(300 - 5);
  });

  it('When the pacer is released, then waiting callers go at once', async () => {
    const pacer = new Pacer(redis, `${device}-x`, 60_000, 0);
    await pacer.wait();
    const started = Date.now();
    const second = pacer.wait();
    pacer.release();
    await second;
    // Not its 60 s gap: quiet: 2 ms.
    expect(Date.now() - started).to.be.below(10_000);
  });

  const fetcher = (timeoutMs: number, allowed = '127.0.0.1') =>
    createAttachmentFetcher({ outbound: { allowList: parseAllowedPrivateHosts(allowed) }, timeoutMs });

  it('When an attachment URL answers, then its bytes load; 404, slow and oversize URLs fail permanently with the reason', async () => {
    expect((await fetcher(1000)(`${base}/small`)).toString()).to.equal('hello');
    expect(await reason(fetcher(1000)(`${base}/nothing`))).to.equal('attachment_unreachable');
    expect(await reason(fetcher(200)(`${base}/slow`))).to.equal('attachment_unreachable');
    expect(await reason(fetcher(5000)(`${base}/chunked-huge`))).to.equal('attachment_too_large');
    expect(ATTACHMENT_MAX_BYTES).to.equal(10 * 1024 * 1024);
  });

  it('When an attachment URL points at a private address that is not allowed, then it fails attachment_url_not_allowed without a request', async () => {
    let requests = 0;
    server.on('request', () => (requests += 1));
    const port = (server.address() as AddressInfo).port;
    for (const url of [
      `http://127.0.0.1:${port}/small`,
      `http://localhost:${port}/small`,
      `http://[::ffff:127.0.0.1]:${port}/small`,
      `http://2130706433:${port}/small`,
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/file.pdf',
    ]) {
      expect(await reason(fetcher(1000, '')(url)), url).to.equal('attachment_url_not_allowed');
    }
    expect(requests).to.equal(0);
  });

  it('When a media message is followed by its text, then the text id is stable across retries and WhatsApp-shaped', () => {
    expect(followUpId('3EB0AAAAAAAAAAAAAAAAAA')).to.equal(followUpId('3EB0AAAAAAAAAAAAAAAAAA'));
    expect(followUpId('3EB0AAAAAAAAAAAAAAAAAA')).to.match(/^3EB0[0-9A-F]{18}$/);
    expect(followUpId('3EB0AAAAAAAAAAAAAAAAAA')).to.not.equal(followUpId('3EB0AAAAAAAAAAAAAAAAAB'));
  });
});
