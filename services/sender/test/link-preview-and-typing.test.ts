import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createLogger, parseAllowedPrivateHosts } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { createLinkPreviewer, firstUrl, readPage, type PreviewOutcome } from '../src/send/link-preview.js';
import { Pacer } from '../src/send/pacing.js';
import { TYPING_MAX_MS, TYPING_MIN_MS, typingMs } from '../src/send/typing.js';

/** Blocks this thread (the event loop) for `ms`, as a sender short of CPU would be. */
function blockEventLoop(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

describe('sender: link previews (real HTTP through the outbound guard) and typing', () => {
  let server: Server;
  let base = '';
  const hits: string[] = [];
  const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(200, 7)]);
  before(async () => {
    server = createServer((req, res) => {
      hits.push(req.url ?? '');
      if (req.url === '/img.jpg') return res.writeHead(200, { 'content-type': 'image/jpeg' }).end(jpeg);
      if (req.url === '/data.json')
        return res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        `<head><title>T</title><meta content="Og title" property="og:title"><meta property='og:image' content='/img.jpg'>` +
          `<meta name="description" content="  A   description &lt;b&gt;  "></head>`,
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  const logger = createLogger({ level: 'silent', service: 'test' });

  it('When a text has URLs, then the first is taken without trailing punctuation; a page is read Open Graph first', () => {
    expect(firstUrl('see https://a.example/x?y=1, and http://b.example')).to.equal('https://a.example/x?y=1');
    expect(firstUrl('(https://a.example/path).')).to.equal('https://a.example/path');
    expect(firstUrl('no link here, ftp://x')).to.equal(undefined);
    expect(readPage('<title> Only  title </title>')).to.deep.equal({ title: 'Only title' });
    expect(readPage(`<meta property="og:title" content="A &amp; B"><title>x</title>`).title).to.equal(
      'A & B',
    );
    expect(readPage('<p>nothing</p>')).to.deep.equal({});
  });

  it('When the host is allowed, then title, description and JPEG thumbnail come back, fetched once for many texts of a device and again for another device', async () => {
    const outcomes: PreviewOutcome[] = [];
    const preview = createLinkPreviewer({
      outbound: { allowList: parseAllowedPrivateHosts('127.0.0.1') },
      logger,
      onOutcome: (o) => outcomes.push(o),
    });
    const url = `${base}/page`;
    const [a, b] = await Promise.all([preview(`one ${url}`, 'dev-a'), preview(`two ${url}.`, 'dev-a')]);
    expect(a).to.deep.include({ matchedText: url, url, title: 'Og title', description: 'A description <b>' });
    expect(a!.jpegThumbnail!.equals(jpeg)).to.equal(true);
    expect(b).to.equal(a);
    expect(hits.filter((h) => h === '/page')).to.have.length(1);
    // Another tenant's device does not get the first one's cached preview: it is fetched for it.
    const c = await preview(`three ${url}`, 'dev-b');
    expect(c).to.deep.include({ url, title: 'Og title' });
    expect(c).to.not.equal(a);
    expect(hits.filter((h) => h === '/page')).to.have.length(2);
    expect(await preview(`${base}/data.json`, 'dev-a')).to.equal(undefined);
    expect(outcomes).to.deep.equal(['ok', 'ok', 'none']);
  });

  it('When the host is not allowed (loopback without ALLOWED_PRIVATE_HOSTS), then no preview and no request', async () => {
    const outcomes: PreviewOutcome[] = [];
    const preview = createLinkPreviewer({
      outbound: { allowList: parseAllowedPrivateHosts('') },
      logger,
      onOutcome: (o) => outcomes.push(o),
    });
    const before = hits.length;
    expect(await preview(`look ${base}/private`, 'dev-a')).to.equal(undefined);
    expect(hits.length).to.equal(before);
    expect(outcomes).to.deep.equal(['refused']);
  });

  it('When a text is longer, then typing lasts longer, up to its bound; the pacer starts it before the turn and never past the gap', async () => {
    expect(typingMs(10)).to.be.lessThan(typingMs(100));
    expect(typingMs(1_000_000)).to.equal(TYPING_MAX_MS);
    const redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    try {
      const device = `typing-${Math.random().toString(36).slice(2, 8)}`;
      const pacer = new Pacer(redis, device, 300, 0);
      expect(await pacer.typing()).to.equal(true);
      const started: number[] = [];
      const t0 = Date.now();
      await pacer.wait({ ms: 5000, start: () => started.push(Date.now()) });
      const turn = Date.now();
      expect(started).to.have.length(1);
      // Bounded by the gap (300 ms), not the 5 s asked for.
      expect(turn - started[0]!).to.be.at.least(250);
      expect(turn - t0).to.be.lessThan(3200); // quiet: 320 ms
      await redis.hset(keys.deviceSettings(`${device}-off`), 'typing', 'false');
      expect(await new Pacer(redis, `${device}-off`, 300, 0).typing()).to.equal(false);
    } finally {
      await redis.quit();
    }
  });

  it("When a message finds its paced device idle, then one of its own waits its typing while a list's first goes at once, untyped, and the list's next is typed within its gap", async () => {
    const redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    try {
      // Each wait is checked for how late it came past its due time (a few ms when quiet), with
      // room for 10 x that and more, and a 3 s gap so that a wrong pacer (waiting the gap instead
      // of the typing, typing after the gap) still lands 1 s or more outside it.
      const GAP = 3000;
      const device = `typing-idle-${Math.random().toString(36).slice(2, 8)}`;
      const started: string[] = [];
      const lead = (name: string, whenIdle: boolean) => ({
        ms: 1000,
        minMs: TYPING_MIN_MS,
        whenIdle,
        start: () => started.push(name),
      });
      // A message of its own on an idle device: typed first, so it waits the typing.
      let t0 = Date.now();
      await new Pacer(redis, `${device}-own`, GAP, 0).wait(lead('own', true), t0);
      expect(started).to.deep.equal(['own']);
      expect(Date.now() - t0 - 1000, 'past its 1 s of typing').to.be.within(-50, 700); // quiet: 45 ms
      // A list's first message on an idle device: at once, nothing typed.
      const list = new Pacer(redis, `${device}-list`, GAP, 0);
      const queuedAt = (t0 = Date.now());
      await list.wait(lead('first', false), queuedAt);
      expect(Date.now() - t0, 'at once, not typed first').to.be.lessThan(300); // quiet: 5 ms
      expect(started).to.deep.equal(['own']);
      // Its next, on schedule: typed within the gap, at the gap's end.
      const last = Date.now();
      await list.wait(lead('second', false), queuedAt);
      expect(started).to.deep.equal(['own', 'second']);
      expect(Date.now() - last - GAP, 'past its slot').to.be.within(-30, 700); // quiet: 10 ms
    } finally {
      await redis.quit();
    }
  });

  it('When the sender reaches a batch message late, then its typing is cut to what is left of the gap and the message still goes at its slot; with less than the minimum left, none shows', async function () {
    this.timeout(40_000);
    const redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    try {
      // Each send is checked for how late it came past its slot (quiet: 5-55 ms), with 700 ms of
      // room (a loaded machine's slower Redis round trips), and a 3 s gap reached 1 s late, so
      // that a wrong pacer (typing the whole gap, or the message pushed back by how late the turn
      // began) still lands 1 s past the slot.
      const GAP = 3000;
      const LATE = 1000;
      const pacer = new Pacer(redis, `typing-late-${Math.random().toString(36).slice(2, 8)}`, GAP, 0);
      const started: number[] = [];
      const typing = { ms: GAP, minMs: TYPING_MIN_MS, start: () => started.push(Date.now()) };
      const queuedAt = Date.now();
      await pacer.wait(typing, queuedAt); // the first: typed after the idle spell
      let last = Date.now();
      expect(started).to.have.length(1);
      // On schedule the typing fills the whole gap; the worker gets to the message 1 s after the
      // last send (a busy loop): typing from then, and the message at its slot.
      blockEventLoop(LATE);
      await pacer.wait(typing, queuedAt);
      expect(started).to.have.length(2);
      const typed = Date.now() - started[1]!;
      expect(Date.now() - last - GAP, 'past its slot, not 1 s past it').to.be.within(-30, 700); // quiet: 55 ms
      expect(typed, 'typed').to.be.at.least(TYPING_MIN_MS);
      expect(typed - (GAP - LATE), 'typed past what was left of the gap').to.be.below(700); // quiet: 10 ms
      pacer.takeLagMs(); // the late turn counts as lag (schedule-lag.test.ts)
      last = Date.now();
      // 2,800 ms late: 200 ms would be left, under the minimum: no typing, the message at its slot.
      blockEventLoop(GAP - 200);
      await pacer.wait(typing, queuedAt);
      expect(started).to.have.length(2);
      expect(Date.now() - last - GAP, 'past its slot').to.be.within(-30, 700); // quiet: 30 ms
      last = Date.now();
      // Past the slot altogether: it goes at once, untyped (not a gap later).
      blockEventLoop(GAP + 500);
      await pacer.wait(typing, queuedAt);
      expect(started).to.have.length(2);
      expect(Date.now() - last - (GAP + 500), 'past the block').to.be.within(-10, 700); // quiet: 10 ms
    } finally {
      await redis.quit();
    }
  });
});
