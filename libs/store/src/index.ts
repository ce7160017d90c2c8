export * from './config.js';
export * from './message-store.js';
export * from './session-store.js';
export * from './token-store.js';
export * from './media-store.js';
export * from './send-queues.js';
export * from './encryption/index.js';
