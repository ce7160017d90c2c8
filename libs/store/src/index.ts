export * from './config.js';
export * from './sealer.js';
export * from './message-store.js';
export * from './content-store.js';
export * from './device-state.js';
export * from './session-store.js';
export * from './token-store.js';
export * from './send-queues.js';
