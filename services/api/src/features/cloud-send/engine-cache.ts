import type { DeviceEngine } from '@mgw/contracts';
import type { CloudDeviceStore } from '@mgw/store';

/** An engine as last read, and until when it is used (ms since the epoch). */
interface Entry {
  engine: DeviceEngine;
  until: number;
}

/**
 * Each device's engine (`linked` or `cloud`), remembered for a few seconds so that a /send to a
 * linked device — nearly all of them — pays no Redis round trip to learn it: the answer comes back
 * as it is, no promise, no await (the accept path's cost stays as it was). A stale answer is
 * harmless: the sender judges the Cloud API's rules again when it sends, so a device that just
 * became `cloud` has its first free-form messages refused there, not here, for at most `ttlMs`.
 * A template is never judged from here: it reads the device's configuration itself.
 */
export class EngineCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly store: Pick<CloudDeviceStore, 'engineOf'>,
    private readonly opts: { ttlMs: number; maxEntries: number } = { ttlMs: 5000, maxEntries: 10_000 },
  ) {}

  engineOf(deviceId: string, now = Date.now()): DeviceEngine | Promise<DeviceEngine> {
    const hit = this.entries.get(deviceId);
    if (hit && hit.until > now) return hit.engine;
    return this.store.engineOf(deviceId).then((engine) => {
      // A full map is emptied rather than grown: its size is bounded whatever ids are asked for.
      if (this.entries.size >= this.opts.maxEntries) this.entries.clear();
      this.entries.set(deviceId, { engine, until: now + this.opts.ttlMs });
      return engine;
    });
  }

  /** Forgets a device's engine (its configuration changed in this process). */
  drop(deviceId: string): void {
    this.entries.delete(deviceId);
  }
}
