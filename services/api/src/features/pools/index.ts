/**
 * What other features use of the pools capability: a pool token's send (features/send) and its
 * batch control (features/batches), each spread over the pool's devices.
 */
export { controlPoolBatch, type PoolBatchControlOutcome } from './pool-control.js';
export { sendThroughPool } from './pool-send.js';
