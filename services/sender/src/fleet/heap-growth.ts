import v8 from 'node:v8';

/**
 * How far V8 lets the old generation grow past what survived the last full collection before
 * the next one. V8 picks a factor between 1.1 and 4 from how fast the program allocates and how
 * fast it collects; a sender setting up Signal sessions for a burst of new contacts allocates
 * fast, so V8 chose ~3× and kept a heap of ~400 MiB around 136 MiB of live objects. A fixed
 * factor keeps the heap in proportion to what the sender holds — its devices and contacts —
 * for a few per cent more CPU (more frequent full collections), where a fixed heap limit would
 * fit one fleet size and fail a larger one.
 *
 * `percent` 0 leaves V8's own choice. V8 reads the flag each time it sizes the heap after a full
 * collection, so setting it once at start-up (before any device is loaded) applies to the whole
 * process; `node --heap-growing-percent=N` on the command line would do the same, but the
 * command line differs between `npm start`, compose and Kubernetes while this runs everywhere.
 */
export function limitHeapGrowth(percent: number): void {
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}
