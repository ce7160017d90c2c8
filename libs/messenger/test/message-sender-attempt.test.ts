import { expect } from 'chai';
import { Redis } from 'ioredis';
import { DisconnectReason } from '@whiskeysockets/baileys';
import { AckTimeoutError, NotConnectedError, ServerRejectedError, type SendAttempt } from '../src/index.js';
import { fakeSocketSender } from './fake-socket-sender.js';

/** Baileys' error when the socket is closed where it would write a frame (or under a query's wait). */
const connectionClosed = () =>
  Object.assign(new Error('Connection Closed'), {
    output: { statusCode: DisconnectReason.connectionClosed },
  });

/**
 * Whether a send attempt began: a frame of the message may have been handed to the socket
 * (docs/architecture.md, "When a send began"). The socket is a fake whose write and ack each test
 * sets; the classification is MessageSender's.
 */
describe('messenger: whether a send attempt began (fake socket, real Redis)', () => {
  let redis: Redis;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    await redis.quit();
  });

  /** A sender on an open fake socket whose `sendMessage` does `write` and whose ack is `ack`. */
  const senderWith = (write: () => Promise<unknown>, ack: () => Promise<unknown>) =>
    fakeSocketSender(redis, 'attempt', { sendMessage: write, waitForMessage: ack });

  const text = { jid: '15550001234@s.whatsapp.net', platformMessageId: '3EB0ATTEMPT0001', text: 'hi' };
  const sent = async () => ({ key: { id: text.platformMessageId } });
  const acked = async () => ({ tag: 'ack', attrs: {} });

  async function attemptOf(write: () => Promise<unknown>, ack: () => Promise<unknown>) {
    const { conn, sender } = await senderWith(write, ack);
    const attempt: SendAttempt = { began: false };
    const err = await sender.send(text, attempt).then(
      () => undefined,
      (e: unknown) => e,
    );
    await conn.stop();
    return { err, began: attempt.began };
  }

  it('When the socket closes before the message frame is written (Baileys: Connection Closed), then the attempt did not begin and fails as not connected', async () => {
    const r = await attemptOf(() => Promise.reject(connectionClosed()), acked);
    expect(r.err).to.be.instanceOf(NotConnectedError);
    expect(r.began).to.equal(false);
  });

  it('When WhatsApp refuses the frame with an error ack, then the attempt did not begin its send (it delivers nothing it refused)', async () => {
    const r = await attemptOf(sent, async () => ({ tag: 'ack', attrs: { error: '463' } }));
    expect(r.err).to.be.instanceOf(ServerRejectedError);
    expect(r.began).to.equal(false);
  });

  it('When the write fails some other way, or the ack never comes, then the attempt began (a frame may have reached WhatsApp)', async () => {
    const failed = await attemptOf(() => Promise.reject(new Error('Timed Out')), acked);
    expect(failed.err).to.be.instanceOf(Error).and.not.instanceOf(NotConnectedError);
    expect(failed.began).to.equal(true);
    const noAck = await attemptOf(sent, async () => undefined);
    expect(noAck.err).to.be.instanceOf(AckTimeoutError);
    expect(noAck.began).to.equal(true);
  });

  it('When the message is acknowledged, then the attempt began and the send resolves', async () => {
    const r = await attemptOf(sent, acked);
    expect(r).to.deep.equal({ err: undefined, began: true });
  });
});
