/**
 * What other features use of the batches capability: a device's batch control (the pools control
 * each device's part of a pooled batch with it, and cancel a pooled send's parts when one fails).
 */
export { controlDeviceBatch, type DeviceBatchControlOutcome } from './control-batch.js';
