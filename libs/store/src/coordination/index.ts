/**
 * Leases with fencing, interval locks on them and process liveness (`@mgw/store/coordination`): a
 * narrow entry, so a worker thread (the sender's lease renewer) loads these without the package index.
 */
export * from './lease.js';
export * from './interval-lock.js';
export * from './liveness.js';
