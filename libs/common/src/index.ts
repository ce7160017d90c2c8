export * from './config.js';
export * from './logger.js';
export * from './redis.js';
export * from './metrics.js';
export * from './ops-server.js';
export * from './shutdown.js';
export * from './outbound/index.js';
export * from './redis-scripts.js';
