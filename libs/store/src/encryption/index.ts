export * from './config.js';
export * from './encryption.js';
export * from './families.js';
export * from './opened-text-cache.js';
export * from './rotation.js';
