export * from './errors.js';
export * from './limits.js';
export * from './ids.js';
export * from './otp-templates.js';
export * from './queues.js';
export * from './jobs.js';
export * from './keys.js';
export * from './schemas.js';
