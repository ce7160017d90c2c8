import type { RedisClient } from '@mgw/common';
import { serializeError, type Logger } from '@mgw/common';
import { OUTBOX_GROUP, keys, type EventType, type WebhookJobData } from '@mgw/contracts';
import type { DeviceWorkers } from './device-workers.js';

/** Entries read at once from one outbox. */
const PAGE = 500;
/**
 * An entry read by a notifier that did not acknowledge it within this time is taken over (a live
 * one acknowledges within one addBulk; taking over early is harmless: the job id is the event id).
 */
const RECLAIM_IDLE_MS = 10_000;

type StreamEntry = [id: string, fields: string[]];

/**
 * Moves events from the devices' outbox streams (written with the changes they report, see
 * libs/store/src/events.ts) into their delivery queues. Notifiers read through one consumer
 * group, so each entry goes to one of them; an entry is acknowledged and deleted only after its
 * job is in Redis, and the job id is the event id, so an entry read twice (its reader died before
 * acknowledging, and another reclaimed it) still makes one job.
 */
export class OutboxReader {
  private readonly groups = new Set<string>();
  /** Devices being read now, and whether another read was asked for meanwhile. */
  private readonly reading = new Map<string, boolean>();

  constructor(
    private readonly redis: RedisClient,
    private readonly workers: DeviceWorkers,
    private readonly consumer: string,
    private readonly deliveredRetentionSeconds: number,
    private readonly logger: Logger,
  ) {}

  /** Reads the device's outbox until it is empty (calls for a device already being read coalesce). */
  async drain(deviceId: string, reclaim = false): Promise<void> {
    if (this.reading.has(deviceId)) {
      this.reading.set(deviceId, true);
      return;
    }
    this.reading.set(deviceId, false);
    try {
      do {
        this.reading.set(deviceId, false);
        await this.ensureGroup(deviceId);
        if (reclaim) await this.reclaim(deviceId);
        while ((await this.readPage(deviceId)) === PAGE);
      } while (this.reading.get(deviceId));
    } catch (err) {
      this.logger.warn('outbox not read', { deviceId, err: serializeError(err) });
    } finally {
      this.reading.delete(deviceId);
    }
  }

  private async ensureGroup(deviceId: string): Promise<void> {
    if (this.groups.has(deviceId)) return;
    try {
      // From the start of the stream: acknowledged entries are deleted, so what is left is unread.
      await this.redis.xgroup('CREATE', keys.eventOutbox(deviceId), OUTBOX_GROUP, '0', 'MKSTREAM');
    } catch (err) {
      if (!String((err as Error).message).includes('BUSYGROUP')) throw err;
    }
    this.groups.add(deviceId);
  }

  private async readPage(deviceId: string): Promise<number> {
    const key = keys.eventOutbox(deviceId);
    let res: [string, StreamEntry[]][] | null;
    try {
      res = (await this.redis.xreadgroup(
        'GROUP',
        OUTBOX_GROUP,
        this.consumer,
        'COUNT',
        PAGE,
        'STREAMS',
        key,
        '>',
      )) as [string, StreamEntry[]][] | null;
    } catch (err) {
      // The stream (and its group) went with a removed webhook: make the group again next time.
      if (String((err as Error).message).includes('NOGROUP')) this.groups.delete(deviceId);
      throw err;
    }
    const entries = res?.[0]?.[1] ?? [];
    await this.enqueue(deviceId, entries);
    return entries.length;
  }

  /** Entries another notifier read but never acknowledged (it died): take them over. */
  private async reclaim(deviceId: string): Promise<void> {
    const key = keys.eventOutbox(deviceId);
    let cursor = '0-0';
    do {
      const [next, entries] = (await this.redis.xautoclaim(
        key,
        OUTBOX_GROUP,
        this.consumer,
        RECLAIM_IDLE_MS,
        cursor,
        'COUNT',
        PAGE,
      )) as [string, StreamEntry[]];
      await this.enqueue(
        deviceId,
        entries.filter((e) => e?.[1]),
      );
      cursor = next;
    } while (cursor !== '0-0');
  }

  private async enqueue(deviceId: string, entries: StreamEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const queue = this.workers.queue(deviceId);
    const opts = this.workers.jobOptions(this.deliveredRetentionSeconds);
    await queue.addBulk(
      entries.map(([, fields]) => {
        const data = eventOf(fields);
        return { name: data.type, data, opts: { ...opts, jobId: data.id } };
      }),
    );
    const ids = entries.map(([id]) => id);
    const key = keys.eventOutbox(deviceId);
    await this.redis
      .multi()
      .xack(key, OUTBOX_GROUP, ...ids)
      .xdel(key, ...ids)
      .exec();
  }
}

function eventOf(fields: string[]): WebhookJobData {
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
  return {
    id: f.id!,
    type: f.type as EventType,
    timestamp: f.ts!,
    data: f.data ?? '{}',
    ...(f.sealed === '1' ? { sealed: true } : {}),
  };
}
