import type { BatchRecord } from '@mgw/contracts';
import type { BatchStore } from '@mgw/store';
import { MAX_ID_LENGTH } from '../devices/index.js';

/** A list's counts, like the public GET /batches/:batchId. */
export async function showDeviceBatch(
  d: { batches: BatchStore },
  deviceId: string,
  batchId: string,
): Promise<{ kind: 'found'; batch: BatchRecord } | { kind: 'not_found' }> {
  const batch = batchId.length <= MAX_ID_LENGTH ? await d.batches.get(deviceId, batchId) : undefined;
  return batch ? { kind: 'found', batch } : { kind: 'not_found' };
}
