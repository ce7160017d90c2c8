import { closeRedis, createRedis, installShutdown, serializeError } from '@mgw/common';
import { startMessengerRuntime } from '@mgw/messenger';
import { loadConnectionConfig } from './config.js';
import { startConnectionWorker } from './connection-worker.js';
import { PairingManager } from './pairing-manager.js';

async function main(): Promise<void> {
  const config = loadConnectionConfig();
  const rt = await startMessengerRuntime('connection', config);
  const { logger, metrics, redis, leases, sessions, messages, encryption, sandbox } = rt;
  // BLPOP waits for the owning sender's logout reply; BullMQ wants a connection of its own.
  const blocking = createRedis(config.redis.url, 'worker', 'connection-blocking');
  const bullConnection = createRedis(config.redis.url, 'worker', 'connection-bull');
  const pairing = new PairingManager({ config, logger, redis, encryption, leases, sessions, sandbox });
  const worker = startConnectionWorker({
    config,
    logger,
    metrics,
    redis,
    blocking,
    bullConnection,
    leases,
    sessions,
    messages,
    encryption,
    sandbox,
    pairing,
  });
  const ops = await rt.startOps();
  installShutdown(
    logger,
    [
      { name: 'connection worker', run: () => worker.close() },
      { name: 'pairing sockets', run: () => pairing.stopAll() },
      { name: 'ops server', run: () => ops.close() },
      { name: 'redis', run: () => closeRedis(bullConnection, blocking, rt.leaseRedis, redis) },
    ],
    config.shutdownTimeoutMs,
  );
  logger.info('connection service started', { owner: leases.owner, metricsPort: ops.port });
}

main().catch((err: unknown) => {
  process.stderr.write(`connection service failed to start: ${JSON.stringify(serializeError(err))}\n`);
  process.exit(1);
});
