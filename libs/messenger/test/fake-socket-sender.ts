import { EventEmitter } from 'node:events';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { createLogger } from '@mgw/common';
import { ContactCache, Encryption } from '@mgw/store';
import { DeviceSocket, MessageSender, type WASocket } from '../src/index.js';

/**
 * A MessageSender on an open DeviceSocket whose Baileys socket is a fake: `methods` are the
 * socket calls a test answers (a lookup's `executeUSyncQuery`, a send's `sendMessage` and
 * `waitForMessage`); the rest is what opening a socket needs. Real Redis for the stores.
 */
export async function fakeSocketSender(redis: Redis, prefix: string, methods: Record<string, unknown>) {
  const deviceId = `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
  const sock = {
    ev: new EventEmitter(),
    user: { id: '15550009999:3@s.whatsapp.net', name: 'Me' },
    profilePictureUrl: async () => undefined,
    end: async () => undefined,
    ...methods,
  };
  const options = {
    redis,
    encryption: Encryption.fromEnv(),
    logger: createLogger({ level: 'silent', service: 'test' }),
    deviceId,
    messageRetentionSeconds: 60,
    contacts: new ContactCache(redis, 3600),
  };
  const conn = new DeviceSocket({
    ...options,
    epoch: () => 1,
    createSocket: () => sock as unknown as WASocket,
  });
  await conn.start();
  sock.ev.emit('connection.update', { connection: 'open' });
  expect(await conn.waitForOpen(5_000)).to.equal(true);
  return { deviceId, conn, sender: new MessageSender(conn, options) };
}
