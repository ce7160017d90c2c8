/**
 * The fast link, for benches and tests only: links thousands of accounts in seconds where a QR
 * link each (a pairing socket, a scan, pair-success, the 515 restart) takes a good part of a
 * second. The simulator provisions each account's companion device (its control API,
 * `POST /companions`: the phone signs the companion's identity as for a QR link), the companion's
 * Baileys credentials are made here as Baileys makes them (companion-creds.ts), and the gateway's
 * side of a completed link is written through the gateway's own functions, in the order the
 * connection service writes it after pair-success (services/connection/src/pairing-start.ts):
 *
 * 1. the device's lease taken (`LeaseManager`), as the pairing holds it: every credential write is
 *    fenced by its epoch;
 * 2. the credentials, sealed, under that epoch (`storeAuthCreds`, the sealing of `saveCreds`);
 * 3. the session record `connecting` with the account's phone and name (`SessionStore.update`: its
 *    `session.status` event too);
 * 4. the warm-up's start (`startWarmup`), the `linked` field and the roster of linked devices
 *    (`markLinked`, which the senders' `devices_linked` counts);
 * 5. the lease released, and the senders told (`keys.devicesChannel()`): one claims the device,
 *    logs in with those credentials, uploads its pre-keys and reports `connected`, as after a QR link.
 *
 * Not written, as no pairing ran: the pairing record (`keys.pairing`, gone 15 s after a link).
 * Nothing of this is reachable from the gateway's API: it runs in the test process, and the
 * simulator's control API is the simulator's own.
 */
import { Cluster } from 'ioredis';
import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import {
  accountName,
  hasLinkedCredentials,
  LeaseManager,
  processOwnerId,
  storeAuthCreds,
  type Lease,
} from '@mgw/messenger';
import type { ProvisionedCompanion } from '@mgw/messenger-sim';
import { markLinked, SessionStore, startWarmup, type Encryption } from '@mgw/store';
import { companionKeysBody, newCompanion, pairedCreds, type NewCompanion } from './companion-creds.js';

/** What the fast link needs of a stack (a `Stack` has all of it). */
export interface FastLinkStack {
  readonly redis: RedisClient;
  /** Seals as the stack's services do (their MGW_ENCRYPTION_KEY). */
  readonly encryption: Encryption;
  simApi<T>(method: string, path: string, body?: unknown): Promise<T>;
}

export interface FastLinkInput {
  /** The account's phone number (digits). */
  phone: string;
  /** The gateway device the account is linked to (a token acting on it reads its status). */
  deviceId: string;
  /** The account's name at the simulator, as `linkByQr`'s `name` (default: the simulator's own). */
  name?: string;
  pictureUrl?: string;
}

/** A fast link done: what the gateway was told, and which companion the simulator provisioned. */
export interface FastLinked {
  deviceId: string;
  phone: string;
  /** The account's name, as the session record has it. */
  name?: string;
  /** The companion's `<phone>:<n>@s.whatsapp.net` and `<lid>:<n>@lid`. */
  jid: string;
  lid: string;
  /** Its device number at the simulator. */
  companion: number;
}

export interface FastLinkOptions {
  /** Companions per simulator request (at most 1,000). @defaultValue 500 */
  batchSize?: number;
  /** Devices whose gateway writes are in flight at once (pipelined on one connection). @defaultValue 64 */
  concurrency?: number;
}

/** How long the fast link holds a device's lease: far longer than writing a batch takes. */
const LEASE_TTL_MS = 60_000;

/** Fast-links one account (benches and tests only; see above). */
export async function fastLink(stack: FastLinkStack, input: FastLinkInput): Promise<FastLinked> {
  return (await fastLinkMany(stack, [input]))[0]!;
}

/**
 * Fast-links many accounts, a batch of `batchSize` at a time: one simulator request and one
 * pipeline of lease takes per batch, then each device's writes with `concurrency` devices in
 * flight on an auto-pipelined connection. Throws (having released every lease it took) when a
 * device is already linked or its lease is held — a pairing or a sender has it.
 */
export async function fastLinkMany(
  stack: FastLinkStack,
  inputs: readonly FastLinkInput[],
  opts: FastLinkOptions = {},
): Promise<FastLinked[]> {
  const ids = inputs.map((i) => i.deviceId);
  const twice = ids.find((id, i) => ids.indexOf(id) !== i);
  if (twice) throw new Error(`fast link: device ${twice} is given twice`);
  const batchSize = Math.min(1000, Math.max(1, opts.batchSize ?? 500));
  // Commands issued in the same tick go out as one write: the store functions' round trips of
  // many devices become a few pipelines.
  const redis: RedisClient =
    stack.redis instanceof Cluster
      ? stack.redis.duplicate([], { enableAutoPipelining: true })
      : stack.redis.duplicate({ enableAutoPipelining: true });
  const linker = new BatchLinker(stack, redis, opts.concurrency ?? 64);
  try {
    const linked: FastLinked[] = [];
    for (let i = 0; i < inputs.length; i += batchSize)
      linked.push(...(await linker.link(inputs.slice(i, i + batchSize))));
    return linked;
  } finally {
    redis.disconnect();
  }
}

class BatchLinker {
  private readonly leases: LeaseManager;
  private readonly sessions: SessionStore;

  constructor(
    private readonly stack: FastLinkStack,
    private readonly redis: RedisClient,
    private readonly concurrency: number,
  ) {
    this.leases = new LeaseManager(redis, processOwnerId('fast-link'), LEASE_TTL_MS);
    this.sessions = new SessionStore(redis);
  }

  async link(batch: readonly FastLinkInput[]): Promise<FastLinked[]> {
    const { redis, stack } = this;
    const leases = await this.leases.acquireMany(batch.map((i) => i.deviceId));
    // A device's lease is released as its link ends (then a sender takes it); the rest on the way out.
    const held = new Set(leases.map((lease, i) => (lease ? i : -1)).filter((i) => i >= 0));
    try {
      const busy = batch.filter((_, i) => !leases[i]).map((i) => i.deviceId);
      if (busy.length)
        throw new Error(`fast link: the lease of ${busy.join(', ')} is held (pairing or sender)`);
      const linked = await Promise.all(
        batch.map((i) => hasLinkedCredentials(redis, i.deviceId, stack.encryption)),
      );
      const already = batch.filter((_, i) => linked[i]).map((i) => i.deviceId);
      if (already.length)
        throw new Error(`fast link: ${already.join(', ')} already linked (log it out first)`);

      const companions = batch.map(() => newCompanion());
      const { companions: provisioned } = await stack.simApi<{ companions: ProvisionedCompanion[] }>(
        'POST',
        '/companions',
        {
          companions: batch.map((input, i) => ({
            phone: input.phone,
            ...(input.name ? { name: input.name } : {}),
            ...(input.pictureUrl ? { pictureUrl: input.pictureUrl } : {}),
            ...companionKeysBody(companions[i]!.creds),
          })),
        },
      );
      const out: FastLinked[] = new Array(batch.length);
      await inParallel(batch.length, this.concurrency, async (i) => {
        out[i] = await this.write(leases[i]!, companions[i]!, provisioned[i]!, () => held.delete(i));
      });
      return out;
    } finally {
      await Promise.all([...held].map((i) => this.leases.release(leases[i]!)));
    }
  }

  /** The gateway's side of one link, as the connection service writes it after pair-success. */
  private async write(
    lease: Lease,
    companion: NewCompanion,
    paired: ProvisionedCompanion,
    released: () => void,
  ): Promise<FastLinked> {
    const { redis } = this;
    const { deviceId, epoch } = lease;
    const creds = pairedCreds(companion, paired);
    const stored = await storeAuthCreds(redis, this.stack.encryption, deviceId, epoch, creds);
    if (stored !== 'applied') throw new Error(`fast link: credentials of ${deviceId} not stored (${stored})`);
    // The PairingSession's `paired` account: the phone of `me`, its name unless Baileys' '~'.
    const name = accountName(creds.me?.name) ?? creds.me?.verifiedName;
    await this.sessions.update(deviceId, 'connecting', { phone: paired.phone, name });
    await startWarmup(redis, deviceId);
    await markLinked(redis, deviceId);
    released();
    await this.leases.release(lease);
    await redis.publish(keys.devicesChannel(), deviceId);
    return {
      deviceId,
      phone: paired.phone,
      name,
      jid: paired.jid,
      lid: paired.lid,
      companion: paired.deviceId,
    };
  }
}

/** Runs `task(0…count-1)`, at most `limit` at once; the first failure is thrown once all ended. */
export async function inParallel(
  count: number,
  limit: number,
  task: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const errors: unknown[] = [];
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await task(i).catch((err: unknown) => void errors.push(err));
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
  if (errors.length) throw errors[0];
}
