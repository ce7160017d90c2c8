import { expect } from 'chai';
import net from 'node:net';

describe('test harness', () => {
  it('When the suite starts, then REDIS_URL points at a Redis that answers PING', async () => {
    const url = new URL(process.env.REDIS_URL ?? '');
    const reply = await new Promise<string>((resolve, reject) => {
      const sock = net.connect(Number(url.port || 6379), url.hostname);
      sock.once('error', reject);
      sock.once('connect', () => sock.write('PING\r\n'));
      sock.once('data', (d) => {
        sock.end();
        resolve(d.toString());
      });
    });
    expect(reply).to.equal('+PONG\r\n');
  });
});
