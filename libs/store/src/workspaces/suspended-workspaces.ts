import { Subscription, serializeError, type Logger, type RedisClient } from '@mgw/common';
import { DEFAULT_WORKSPACE, keys } from '@mgw/contracts';

/**
 * Which workspaces are suspended, as a sender knows it without a round trip per message
 * (docs/workspaces.md): every workspace's status is read when the subscription to
 * `keys.workspacesChannel()` is (re)confirmed, and one workspace's again when a change of it is
 * published (WorkspaceStore.update). While not subscribed the last statuses read are kept: a
 * suspension heard late holds messages late, never loses one. Who owns a device is read once per
 * device and kept (a device never changes workspace while it is linked).
 */
export class SuspendedWorkspaces {
  private readonly suspended = new Set<string>();
  private readonly owners = new Map<string, Promise<string>>();
  private subscription?: Subscription;

  constructor(
    private readonly redis: RedisClient,
    private readonly subscriber: RedisClient,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    this.subscription = new Subscription({
      client: this.subscriber,
      channels: [keys.workspacesChannel()],
      // A workspace whose record changed, or a device given to a workspace (its owner read again).
      onMessage: (_channel, id) => {
        this.owners.delete(id);
        void this.refresh([id]).catch((err: unknown) => {
          this.logger.warn('could not read a workspace’s status', {
            workspaceId: id,
            err: serializeError(err),
          });
        });
      },
      onSubscribed: () => void this.refreshAll(),
      logger: this.logger,
    });
    await this.subscription.start();
  }

  async stop(): Promise<void> {
    await this.subscription?.stop();
  }

  /** Whether the workspace that owns `deviceId` is suspended now. */
  async deviceSuspended(deviceId: string): Promise<boolean> {
    if (this.suspended.size === 0) return false;
    return this.suspended.has(await this.ownerOf(deviceId));
  }

  private ownerOf(deviceId: string): Promise<string> {
    let owner = this.owners.get(deviceId);
    if (!owner) {
      owner = this.redis.hget(keys.deviceWorkspaces(), deviceId).then((w) => w ?? DEFAULT_WORKSPACE);
      // A failed read is asked again next time.
      owner.catch(() => this.owners.delete(deviceId));
      this.owners.set(deviceId, owner);
    }
    return owner;
  }

  private async refreshAll(): Promise<void> {
    try {
      await this.refresh(await this.redis.smembers(keys.workspaceIndex()), true);
    } catch (err) {
      this.logger.warn('could not read the workspaces’ statuses', { err: serializeError(err) });
    }
  }

  private async refresh(ids: string[], all = false): Promise<void> {
    const statuses = await Promise.all(ids.map((id) => this.redis.hget(keys.workspace(id), 'status')));
    if (all) this.suspended.clear();
    ids.forEach((id, i) => {
      if (statuses[i] === 'suspended') this.suspended.add(id);
      else this.suspended.delete(id);
    });
  }
}
