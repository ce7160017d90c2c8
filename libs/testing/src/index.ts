export * from './net.js';
export * from './redis-server.js';
export * from './stack.js';
export * from './test-device.js';
export * from './test-simulator.js';
export * from './use-stack.js';
export * from './media-download.js';
export * from './redis-cluster.js';
