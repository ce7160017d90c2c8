import type { LabelListed } from '@mgw/contracts';
import type { LabelDeps } from './device-labels.js';

type Label = Omit<LabelListed, 'chats'>;
type LabelReads = LabelDeps['store'];

/**
 * TEST SUPPORT, not used by the API: the label store's reads in memory, for the label use cases'
 * fast tests — what the holder learnt from app-state sync (`edit`, `associate`), read as
 * libs/store's LabelStore reads it (labels by id, a label's chats in lexical order, paged).
 */
export class MemoryLabels implements LabelReads {
  private readonly labels = new Map<string, Map<string, Label>>();
  private readonly carried = new Map<string, Set<string>>();

  /** A label edit the device saw (a deleted one is forgotten, with its chats). */
  async edit(deviceId: string, label: Label & { deleted: boolean }): Promise<void> {
    const own = this.labels.get(deviceId) ?? new Map<string, Label>();
    this.labels.set(deviceId, own);
    const { deleted, ...kept } = label;
    if (deleted) {
      own.delete(label.id);
      this.carried.delete(`${deviceId}\n${label.id}`);
    } else own.set(label.id, kept);
  }

  /** A chat got (or lost) a label. */
  async associate(deviceId: string, labelId: string, chat: string, labeled: boolean): Promise<void> {
    const key = `${deviceId}\n${labelId}`;
    const chats = this.carried.get(key) ?? new Set<string>();
    this.carried.set(key, chats);
    if (labeled) chats.add(chat);
    else chats.delete(chat);
  }

  private chatsOf(deviceId: string, labelId: string): string[] {
    return [...(this.carried.get(`${deviceId}\n${labelId}`) ?? [])].sort();
  }

  async list(deviceId: string): Promise<LabelListed[]> {
    return [...(this.labels.get(deviceId)?.values() ?? [])]
      .sort((a, b) => Number(a.id) - Number(b.id))
      .map((l) => ({ ...l, chats: this.chatsOf(deviceId, l.id).length }));
  }

  async get(deviceId: string, labelId: string): Promise<LabelListed | undefined> {
    return (await this.list(deviceId)).find((l) => l.id === labelId);
  }

  async ofChat(deviceId: string, chat: string): Promise<Label[]> {
    return (await this.list(deviceId))
      .filter((l) => this.chatsOf(deviceId, l.id).includes(chat))
      .map(({ chats: _chats, ...label }) => label);
  }

  async chats(
    deviceId: string,
    labelId: string,
    page: { limit: number; after?: string },
  ): Promise<{ chats: string[]; next: string | null } | undefined> {
    if (!this.labels.get(deviceId)?.has(labelId)) return undefined;
    const after = this.chatsOf(deviceId, labelId).filter((c) => page.after === undefined || c > page.after);
    const chats = after.slice(0, page.limit);
    return { chats, next: after.length > page.limit ? chats.at(-1)! : null };
  }
}
