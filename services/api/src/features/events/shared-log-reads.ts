import type { EventLog, EventLogPage, EventLogQuery } from '@mgw/store';

/**
 * One read of a device's event log for all the streams that want the same page at the same time.
 *
 * Every stream of a device wakes on the same publication and, when it kept up, stands at the same
 * cursor: without this, 200 readers of a device cost 200 XINFO + XRANGE round trips, 200 openings
 * of every sealed event and 200 JSON encodings per wake. With it, a read asked while an identical
 * one (same device, cursor, limit, filter) is under way joins it, so they cost one (and the
 * events, the same objects, are encoded once: sse-output.ts keeps each one's frame).
 *
 * Joining must never hide an event: a read started before an append does not see it, so a stream
 * woken by that append may not join it. Each device has a generation, raised when its log grows
 * (the publication) or may have grown unheard (the subscription restored); a read joins only one
 * started in the current generation, that is after the last append this process heard of.
 */
export class SharedLogReads {
  private readonly generation = new Map<string, number>();
  /** Generations are drawn from one clock, so a device forgotten and read again never reuses one. */
  private clock = 0;
  private readonly inFlight = new Map<string, { generation: number; page: Promise<EventLogPage> }>();

  constructor(private readonly eventLog: Pick<EventLog, 'read'>) {}

  /** The device's log grew: reads from now on start afresh. */
  grew(deviceId: string): void {
    this.generation.set(deviceId, ++this.clock);
  }

  /** Publications may have been missed (the subscription was restored): every device's log. */
  mayHaveGrown(): void {
    for (const deviceId of this.generation.keys()) this.grew(deviceId);
  }

  /** The devices read so far (whose generation is kept). */
  devices(): string[] {
    return [...this.generation.keys()];
  }

  /** The device has no stream left in this process. */
  forget(deviceId: string): void {
    this.generation.delete(deviceId);
  }

  read(deviceId: string, q: EventLogQuery): Promise<EventLogPage> {
    let generation = this.generation.get(deviceId);
    if (generation === undefined) this.generation.set(deviceId, (generation = ++this.clock));
    const key = `${deviceId}\n${q.after ?? ''}\n${q.limit}\n${q.types?.join(',') ?? ''}`;
    const current = this.inFlight.get(key);
    if (current && current.generation === generation) return current.page;
    const page = this.eventLog.read(deviceId, q);
    const entry = { generation, page };
    this.inFlight.set(key, entry);
    const done = () => {
      if (this.inFlight.get(key) === entry) this.inFlight.delete(key);
    };
    page.then(done, done);
    return page;
  }
}
