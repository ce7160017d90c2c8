export * from './config.js';
export * from './logger.js';
export * from './redis.js';
export * from './errors.js';
export * from './metrics.js';
export * from './shutdown.js';
export * from './message-store.js';
export * from './session-store.js';
