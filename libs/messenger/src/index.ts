export * from './lease.js';
export * from './auth-state.js';
